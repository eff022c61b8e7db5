const { findDrink, priceOf } = require('./menu')
const { nextOrderId, saveOrder } = require('./orders')

const SIZE_NAMES = { tall: '中杯', grande: '大杯', venti: '超大杯' }
const SUGAR_NAMES = { none: '无糖', less: '少糖', normal: '标准糖' }
const TEMP_NAMES = { hot: '热', iced: '冰' }

module.exports = async function confirmOrder (args) {
  const drink = findDrink(args.drinkId)
  if (!drink) {
    return { isError: true, content: [{ type: 'text', text: `菜单上没有编号为 ${args.drinkId} 的饮品，请先调用 searchDrinks。` }] }
  }
  const temperature = drink.temperatures.includes(args.temperature) ? args.temperature : drink.temperatures[0]
  const unitPrice = priceOf(drink, args.size)
  const quantity = args.quantity || 1
  const order = {
    orderId: nextOrderId(),
    status: 'pending',
    currency: 'CNY',
    lines: [{
      drinkId: drink.id,
      name: drink.name,
      image: drink.image,
      spec: [SIZE_NAMES[args.size], TEMP_NAMES[temperature], SUGAR_NAMES[args.sugar]].join(' / '),
      quantity,
      unitPrice,
      amount: unitPrice * quantity
    }],
    total: unitPrice * quantity
  }
  saveOrder(order)
  return {
    content: [{ type: 'text', text: `已生成订单 ${order.orderId}：${drink.name} ×${quantity}，合计 ¥${order.total}。接下来为用户展示订单确认卡片，请用户确认后再支付。` }],
    structuredContent: { order }
  }
}
