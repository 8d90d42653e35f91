// The chat page's HTML. The host serves dist/webview.js and dist/webview.css from the
// extension; the page loads nothing else (no network, no inline script).

export interface WebviewHtmlParams {
  /** webview.asWebviewUri of dist/webview.js */
  scriptUri: string;
  /** webview.asWebviewUri of dist/webview.css */
  styleUri: string;
  /** webview.cspSource: where the extension's own resources come from. */
  cspSource: string;
  /** A fresh random value per page load: the only script allowed is the one carrying it. */
  nonce: string;
}

const escapeAttr = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

export function webviewHtml({ scriptUri, styleUri, cspSource, nonce }: WebviewHtmlParams): string {
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
<script nonce="${escapeAttr(nonce)}" src="${escapeAttr(scriptUri)}"></script>
</body>
</html>
`;
}
