"""The wx.* boundary: the host-call table, its handlers, scoped storage, the state database,
and the allow-listed wx.request."""
