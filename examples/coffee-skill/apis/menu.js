// The café's menu. Prices in CNY for the "grande" size; images are served by the café's CDN.
const CDN = 'https://img.morningbeans.example/drinks/'

const SIZES = ['tall', 'grande', 'venti']
const SIZE_DELTA = { tall: -3, grande: 0, venti: 4 }

const drinks = [
  { id: 'd01', name: '拿铁 Latte', category: 'coffee', price: 28, tags: ['latte', 'milk', '拿铁'], temperatures: ['hot', 'iced'] },
  { id: 'd02', name: '燕麦拿铁 Oat Latte', category: 'coffee', price: 32, tags: ['latte', 'oat', '燕麦'], temperatures: ['hot', 'iced'] },
  { id: 'd03', name: '美式 Americano', category: 'coffee', price: 22, tags: ['americano', 'black', '美式'], temperatures: ['hot', 'iced'] },
  { id: 'd04', name: '卡布奇诺 Cappuccino', category: 'coffee', price: 28, tags: ['cappuccino', 'foam', '卡布'], temperatures: ['hot'] },
  { id: 'd05', name: '馥芮白 Flat White', category: 'coffee', price: 30, tags: ['flat white', 'milk', '澳白'], temperatures: ['hot'] },
  { id: 'd06', name: '焦糖玛奇朵 Caramel Macchiato', category: 'coffee', price: 33, tags: ['caramel', 'macchiato', 'sweet', '焦糖'], temperatures: ['hot', 'iced'] },
  { id: 'd07', name: '摩卡 Mocha', category: 'coffee', price: 31, tags: ['mocha', 'chocolate', '摩卡'], temperatures: ['hot', 'iced'] },
  { id: 'd08', name: '冷萃 Cold Brew', category: 'coffee', price: 29, tags: ['cold brew', 'iced', '冷萃'], temperatures: ['iced'] },
  { id: 'd09', name: '抹茶拿铁 Matcha Latte', category: 'tea', price: 30, tags: ['matcha', 'latte', 'green tea', '抹茶'], temperatures: ['hot', 'iced'] },
  { id: 'd10', name: '伯爵红茶 Earl Grey', category: 'tea', price: 24, tags: ['earl grey', 'black tea', '红茶'], temperatures: ['hot', 'iced'] },
  { id: 'd11', name: '热巧克力 Hot Chocolate', category: 'other', price: 27, tags: ['chocolate', 'kids', '巧克力'], temperatures: ['hot'] },
  { id: 'd12', name: '鲜榨橙汁 Orange Juice', category: 'other', price: 26, tags: ['juice', 'orange', 'iced', '橙汁'], temperatures: ['iced'] }
].map((d) => Object.assign({}, d, { image: CDN + d.id + '.jpg', sizes: SIZES }))

function findDrink (id) {
  return drinks.find((d) => d.id === id) || null
}

function priceOf (drink, size) {
  return drink.price + (SIZE_DELTA[size] || 0)
}

module.exports = { drinks, findDrink, priceOf, SIZES }
