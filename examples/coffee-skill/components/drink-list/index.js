Component({
  data: {
    title: '为你推荐',
    keyword: '',
    drinks: [],
    selectedId: ''
  },

  lifetimes: {
    created () {
      const { NotificationType } = wx.modelContext
      const ctx = wx.modelContext.getContext(this)
      ctx.on(NotificationType.Input, ({ input }) => {
        this.setData({ keyword: (input && input.keyword) || '' })
      })
      ctx.on(NotificationType.Result, ({ result }) => {
        const sc = result.structuredContent || {}
        this.setData({
          drinks: sc.drinks || [],
          title: sc.keyword ? `“${sc.keyword}”的搜索结果` : '为你推荐'
        })
      })
    }
  },

  methods: {
    onSelect (e) {
      const { id, name } = e.currentTarget.dataset
      this.setData({ selectedId: id })
      wx.modelContext.getContext(this).sendFollowUpMessage({
        content: [
          { type: 'text', text: `我要一杯${name}` },
          { type: 'api/call', data: { name: 'confirmOrder', arguments: { drinkId: id, quantity: 1 } } }
        ]
      })
    }
  }
})
