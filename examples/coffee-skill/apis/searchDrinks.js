const { drinks } = require('./menu')

module.exports = async function searchDrinks (args) {
  const keyword = String(args.keyword || '').trim().toLowerCase()
  const limit = args.limit || 12
  const found = drinks.filter((d) => {
    if (args.category && d.category !== args.category) return false
    if (!keyword) return true
    return d.name.toLowerCase().includes(keyword) || d.tags.some((t) => t.includes(keyword))
  })
  const shown = found.slice(0, limit)
  const text = shown.length
    ? `找到 ${found.length} 款饮品：` + shown.map((d) => `${d.name} ¥${d.price}`).join('、') + '。接下来为用户展示饮品列表卡片。'
    : `没有找到与“${args.keyword || ''}”相关的饮品，可以换个说法再试试。`
  return {
    content: [{ type: 'text', text }],
    structuredContent: { keyword: args.keyword || '', total: found.length, drinks: shown }
  }
}
