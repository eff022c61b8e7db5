"""Phase 2, lower and evaluate: WXML AST -> template IR, WXSS -> compiled stylesheet;
template IR + data + viewport -> Render IR (typed RenderNode tree, styles resolved);
old tree + new tree -> patches. Imports only `frontend` and `diagnostics`.
"""
