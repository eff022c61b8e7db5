Component({
  data: {
    order: { orderId: '', lines: [], total: 0 },
    confirmed: false
  },

  lifetimes: {
    created () {
      const { NotificationType } = wx.modelContext
      wx.modelContext.getContext(this).on(NotificationType.Result, ({ result }) => {
        const sc = result.structuredContent || {}
        if (sc.order) this.setData({ order: sc.order })
        // A new order replaces the drink list the user picked from.
        wx.modelContext.getViewContext(this).expirePreviousCards({
          componentPaths: ['components/drink-list/index']
        })
      })
    }
  },

  methods: {
    onConfirm (e) {
      const { orderId } = e.currentTarget.dataset
      this.setData({ confirmed: true })
      wx.modelContext.getContext(this).sendFollowUpMessage({
        content: [
          { type: 'text', text: `确认订单 ${orderId}，请支付` },
          { type: 'api/call', data: { name: 'payOrder', arguments: { orderId } } }
        ]
      })
    }
  }
})
