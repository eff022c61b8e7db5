const searchDrinks = require('./apis/searchDrinks')
const confirmOrder = require('./apis/confirmOrder')
const payOrder = require('./apis/payOrder')

const skill = wx.modelContext.createSkill('skills/coffee-skill')

// Log every call with its duration; the runtime's console capture shows it in the debugger.
skill.use(async (ctx, next) => {
  const started = Date.now()
  await next()
  console.log(`[coffee-skill] ${ctx.name} took ${Date.now() - started} ms`)
})

skill.registerAPI('searchDrinks', searchDrinks)
skill.registerAPI('confirmOrder', confirmOrder)
skill.registerAPI('payOrder', payOrder)
