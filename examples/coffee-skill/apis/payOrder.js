const { loadOrder, saveOrder } = require('./orders')

// Pickup codes are derived from the order id so a retried payment shows the same code.
function pickupCode (orderId) {
  let h = 7
  for (const c of orderId) h = (h * 31 + c.charCodeAt(0)) % 9000
  return String(1000 + h)
}

module.exports = async function payOrder (args) {
  const order = loadOrder(args.orderId)
  if (!order) {
    return {
      content: [{ type: 'text', text: `找不到订单 ${args.orderId}，支付未进行。` }],
      structuredContent: { status: 'failed', orderId: args.orderId, reason: '订单不存在或已过期' }
    }
  }
  if (order.total > 200) {
    return {
      content: [{ type: 'text', text: `订单 ${order.orderId} 金额 ¥${order.total} 超过免密支付额度，支付失败。` }],
      structuredContent: { status: 'failed', orderId: order.orderId, paidAmount: 0, reason: '超过免密支付额度' }
    }
  }
  if (order.status === 'paid') {
    // A retried follow-up must not charge twice.
    return {
      content: [{ type: 'text', text: `订单 ${order.orderId} 已支付，取餐码 ${order.pickupCode}。` }],
      structuredContent: { status: 'success', orderId: order.orderId, paidAmount: order.total, pickupCode: order.pickupCode }
    }
  }
  // WeChat Pay asks the user to confirm in its payment sheet. The café's backend would create the
  // prepay order and sign it; this demo has none, so the order id stands in for both.
  try {
    await wx.requestPayment({
      timeStamp: String(Math.floor(Date.now() / 1000)),
      nonceStr: order.orderId,
      package: 'prepay_id=' + order.orderId,
      signType: 'RSA',
      paySign: 'demo-signature'
    })
  } catch (err) {
    const cancelled = err.errMsg === 'requestPayment:fail cancel'
    const reason = cancelled ? '已取消支付' : '支付失败：' + err.errMsg.replace(/^requestPayment:fail\s*/, '')
    return {
      content: [{ type: 'text', text: `订单 ${order.orderId} 未支付（${err.errMsg}）。接下来为用户展示支付结果卡片，可重新支付。` }],
      structuredContent: { status: 'failed', orderId: order.orderId, paidAmount: 0, reason }
    }
  }
  order.status = 'paid'
  order.pickupCode = pickupCode(order.orderId)
  saveOrder(order)
  return {
    content: [{ type: 'text', text: `支付成功，已付 ¥${order.total}，取餐码 ${order.pickupCode}。接下来为用户展示支付结果卡片。` }],
    structuredContent: { status: 'success', orderId: order.orderId, paidAmount: order.total, pickupCode: order.pickupCode }
  }
}
