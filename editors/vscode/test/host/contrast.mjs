// Text contrast of a page as a reader sees it: every visible element's own text, its colour
// against the background it is painted on (semi-transparent layers blended down to the
// page), checked against WCAG 2.x (4.5:1 for body text, 3:1 for large text); code coloured
// through CSS custom highlights by each highlight's colours.
//
//   const low = await lowContrast(frame);   // [] when every text reads well
//
// Runs inside the page (frame.evaluate), so it sees computed styles of the real theme.

/** Texts of `frame` whose contrast is below WCAG AA: [{text, ratio, fg, bg}]. */
export async function lowContrast(frame, root = 'body') {
  return frame.evaluate((selector) => {
    // Computed colours come as rgb()/rgba(), or as color(srgb r g b / a) (0..1) for color-mix().
    const parse = (value) => {
      const rgb = value.match(/^rgba?\(([^)]+)\)$/);
      const srgb = value.match(/^color\(srgb ([^)]+)\)$/);
      if (!rgb && !srgb) throw new Error(`unknown colour format: ${value}`);
      const [r, g, b, a = '1'] = (rgb ?? srgb)[1]
        .split(/[ ,/]+/)
        .filter(Boolean)
        .map(Number);
      return srgb ? [r * 255, g * 255, b * 255, a] : [r, g, b, a];
    };
    const over = ([r, g, b, a], [R, G, B]) => [r * a + R * (1 - a), g * a + G * (1 - a), b * a + B * (1 - a)];
    const luminance = (rgb) => {
      const [r, g, b] = rgb.map((c) => {
        const s = c / 255;
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    const ratio = (a, b) => {
      const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
      return (hi + 0.05) / (lo + 0.05);
    };
    // The colour an element's box shows: its own background over its ancestors'.
    const backdrop = (el) => {
      const layers = [];
      for (let e = el; e; e = e.parentElement) layers.push(parse(getComputedStyle(e).backgroundColor));
      let rgb = [255, 255, 255];
      for (const layer of layers.reverse()) rgb = over(layer, rgb);
      return rgb;
    };
    const found = [];
    const root = document.querySelector(selector);
    // Code coloured with ranges (the CSS Custom Highlight API: no element per token): each
    // highlight's colours (the element's own where it sets none) on each element its ranges
    // are in, once per element.
    for (const [name, highlight] of CSS.highlights ?? []) {
      const checked = new Set();
      for (const range of highlight) {
        const el = range.startContainer.parentElement;
        if (!el || checked.has(el) || !root.contains(el)) continue;
        checked.add(el);
        if (!el.checkVisibility?.({ opacityProperty: true, visibilityProperty: true })) continue;
        const own = getComputedStyle(el, `::highlight(${name})`);
        const bg = over(parse(own.backgroundColor), backdrop(el));
        const fg = over(parse(own.color), bg);
        const value = ratio(fg, bg);
        if (value < 4.5) {
          const text = range.startContainer.data.slice(range.startOffset, range.endOffset).trim();
          found.push({
            text: `${text.slice(0, 50)} (${name})`,
            ratio: Math.round(value * 100) / 100,
            fg: fg.map(Math.round),
            bg: bg.map(Math.round),
          });
        }
      }
    }
    for (const el of root.querySelectorAll('*')) {
      const own = [...el.childNodes]
        .filter((n) => n.nodeType === Node.TEXT_NODE)
        .map((n) => n.textContent.trim())
        .join(' ')
        .trim();
      if (!own || !el.checkVisibility?.({ opacityProperty: true, visibilityProperty: true })) continue;
      const box = el.getBoundingClientRect();
      if (box.width === 0 || box.height === 0) continue;
      const style = getComputedStyle(el);
      const bg = backdrop(el);
      const fg = over(parse(style.color), bg);
      const size = parseFloat(style.fontSize);
      const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
      const value = ratio(fg, bg);
      if (value < (large ? 3 : 4.5)) {
        found.push({
          text: own.slice(0, 60),
          ratio: Math.round(value * 100) / 100,
          fg: fg.map(Math.round),
          bg: bg.map(Math.round),
        });
      }
    }
    return found;
  }, root);
}
