// Orders live in the skill's storage, scoped to the user by the host.
const KEY_SEQ = 'coffee.orderSeq'
const KEY_PREFIX = 'coffee.order.'

function nextOrderId () {
  const seq = (wx.getStorageSync(KEY_SEQ) || 0) + 1
  wx.setStorageSync(KEY_SEQ, seq)
  return 'MB' + String(seq).padStart(6, '0')
}

function saveOrder (order) {
  wx.setStorageSync(KEY_PREFIX + order.orderId, order)
}

function loadOrder (orderId) {
  return wx.getStorageSync(KEY_PREFIX + orderId) || null
}

module.exports = { nextOrderId, saveOrder, loadOrder }
