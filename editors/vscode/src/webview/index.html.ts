// The chat page's HTML. The host serves dist/webview.js, dist/highlight.js and
// dist/webview.css from the extension; the page loads nothing else (no network, no inline
// script). highlight.js is the code highlighter's worker: the page's script fetches it (its
// address in the app element's data-highlighter) and starts it from a blob (./highlighter).

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
    // The highlighter's script, fetched and run as a worker from a blob (./highlighter).
    `connect-src ${cspSource}`,
    'worker-src blob:',
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
<div id="app" data-highlighter="${escapeAttr(highlightUri)}"></div>
<script nonce="${escapeAttr(nonce)}" src="${escapeAttr(scriptUri)}"></script>
</body>
</html>
`;
}
