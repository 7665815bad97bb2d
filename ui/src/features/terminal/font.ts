/**
 * The theme's monospace font list, resolved for xterm: xterm measures its cells on a canvas,
 * where `var(--mono)` means nothing, so a CSS variable there measured another font and spread
 * the letters of every row apart.
 */
export function terminalFont(style: Pick<CSSStyleDeclaration, "getPropertyValue">): string {
  const mono = style.getPropertyValue("--mono").trim();
  return mono ? `${mono}, monospace` : "ui-monospace, monospace";
}
