Component({
  data: {
    status: '',
    orderId: '',
    paidAmount: 0,
    pickupCode: '',
    reason: ''
  },

  lifetimes: {
    created () {
      const { NotificationType } = wx.modelContext
      wx.modelContext.getContext(this).on(NotificationType.Result, ({ result }) => {
        const sc = result.structuredContent || {}
        this.setData({
          status: sc.status || 'failed',
          orderId: sc.orderId || '',
          paidAmount: sc.paidAmount || 0,
          pickupCode: sc.pickupCode || '',
          reason: sc.reason || ''
        })
      })
      wx.modelContext.getViewContext(this).on(NotificationType.Expire, () => {
        this.setData({ status: 'expired' })
      })
    }
  },

  methods: {
    onRetry (e) {
      const { orderId } = e.currentTarget.dataset
      wx.modelContext.getContext(this).sendFollowUpMessage({
        content: [
          { type: 'text', text: `重新支付订单 ${orderId}` },
          { type: 'api/call', data: { name: 'payOrder', arguments: { orderId } } }
        ]
      })
    }
  }
})
