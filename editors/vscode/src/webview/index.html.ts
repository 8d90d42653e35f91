// The chat page's HTML. The host serves dist/webview.js, dist/highlight.js and
// dist/webview.css from the extension; the page loads nothing else (no network, no inline
// script). highlight.js is an async script of its own: it runs in a task of its own as soon as
// it is in, before or after the page's script (./highlighter).

export interface WebviewHtmlParams {
  /** webview.asWebviewUri of dist/webview.js */
  scriptUri: string;
  /** webview.asWebviewUri of dist/highlight.js */
  highlightUri: string;
  /** webview.asWebviewUri of dist/webview.css */
  styleUri: string;
  /** webview.cspSource: where the extension's own resources come from. */
  cspSource: string;
  /** A fresh random value per page load: the only scripts allowed are those carrying it. */
  nonce: string;
}

const escapeAttr = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

export function webviewHtml({ scriptUri, highlightUri, styleUri, cspSource, nonce }: WebviewHtmlParams): string {
  const csp = [
    "default-src 'none'",
    `img-src ${cspSource} data:`,
    // 'unsafe-inline' for element styles set from script (CSSOM), e.g. the meter's width.
    `style-src ${cspSource} 'unsafe-inline'`,
    `script-src 'nonce-${nonce}'`,
    `font-src ${cspSource}`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${escapeAttr(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${escapeAttr(styleUri)}">
<title>Claude</title>
</head>
<body>
<div id="app"></div>
<script nonce="${escapeAttr(nonce)}" async src="${escapeAttr(highlightUri)}"></script>
<script nonce="${escapeAttr(nonce)}" src="${escapeAttr(scriptUri)}"></script>
</body>
</html>
`;
}
