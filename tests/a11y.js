// Accessibility checks run inside the page by tests/test_workbench_a11y.py (installed with
// add_init_script). Written here rather than vendoring axe-core: the checks the issue asks for
// are few, and each reads what Chromium itself computed (styles, layout), so each result can be
// explained by one rule. Every check returns a list of problems, [] when the page passes.
window.__a11y = (() => {
  const rendered = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility === "visible";
  const describe = (el) => {
    let name = el.tagName.toLowerCase();
    if (el.id) name += "#" + el.id;
    const cls = typeof el.className === "string" ? el.className.trim() : "";
    if (cls) name += "." + cls.split(/\s+/).join(".");
    const section = el.closest("section[id], aside[id]");
    return (section && section !== el ? section.id + " " : "") + name;
  };

  // Colours as Chromium computes them: rgb()/rgba() for everything the stylesheet writes.
  // Anything else (color(), oklch()) is reported, not guessed: an unread colour never passes.
  const parse = (text) => {
    const m = /^rgba?\(([^)]*)\)$/.exec(text);
    if (!m) return null;
    const parts = m[1].split(/[\s,/]+/).filter(Boolean).map(Number);
    return { r: parts[0], g: parts[1], b: parts[2], a: parts.length > 3 ? parts[3] : 1 };
  };
  const over = (top, bottom) => {
    const a = top.a + bottom.a * (1 - top.a);
    if (a === 0) return { r: 0, g: 0, b: 0, a: 0 };
    const mix = (k) => (top[k] * top.a + bottom[k] * bottom.a * (1 - top.a)) / a;
    return { r: mix("r"), g: mix("g"), b: mix("b"), a };
  };
  // WCAG 2.x relative luminance and contrast ratio.
  const luminance = (c) => {
    const lin = (v) => { v /= 255; return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * lin(c.r) + 0.7152 * lin(c.g) + 0.0722 * lin(c.b);
  };
  const ratio = (x, y) => {
    const [hi, lo] = [luminance(x), luminance(y)].sort((p, q) => q - p);
    return (hi + 0.05) / (lo + 0.05);
  };
  // The canvas behind everything, in the scheme the page is shown in.
  const canvas = () => {
    const probe = document.createElement("div");
    probe.style.background = "Canvas";
    document.body.appendChild(probe);
    const colour = parse(getComputedStyle(probe).backgroundColor);
    probe.remove();
    return colour;
  };
  // The colour behind an element: its own and its ancestors' backgrounds, composited.
  const backdrop = (el, base) => {
    const layers = [];
    for (let node = el; node; node = node.parentElement) {
      const style = getComputedStyle(node);
      if (style.backgroundImage !== "none") return { image: describe(node) };
      const colour = parse(style.backgroundColor);
      if (!colour) return { unread: style.backgroundColor };
      layers.push(colour);
    }
    return layers.reduceRight((below, layer) => over(layer, below), base);
  };

  function contrast(minimum) {
    const problems = [];
    const base = canvas();
    const check = (el, text, colourText) => {
      const colour = parse(colourText);
      const behind = backdrop(el, base);
      if (!colour || behind.image || behind.unread) {
        problems.push(`${describe(el)} "${text}": colour ${colourText} on ${JSON.stringify(behind)} not readable`);
        return;
      }
      const shown = ratio(over(colour, behind), behind);
      if (shown < minimum) problems.push(`${describe(el)} "${text}": ${shown.toFixed(2)}:1 (${colourText})`);
    };
    for (const el of document.body.querySelectorAll("*")) {
      if (el.closest("svg, script, style, option, noscript") || !rendered(el)) continue;
      const own = [...el.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.data).join("").trim();
      if (own) check(el, own.slice(0, 40), getComputedStyle(el).color);
      if (el.placeholder && !el.value) check(el, el.placeholder.slice(0, 40), getComputedStyle(el, "::placeholder").color);
      if ((el.tagName === "TEXTAREA" || el.tagName === "INPUT" || el.tagName === "SELECT") && (el.value || el.tagName === "SELECT")) {
        check(el, String(el.value).slice(0, 40), getComputedStyle(el).color);
      }
    }
    return problems;
  }

  // Headings never skip a level going down, and the page starts with its one h1.
  function headings() {
    const found = [...document.querySelectorAll("h1, h2, h3, h4, h5, h6, [role=heading]")].filter(rendered);
    const levels = found.map((h) => Number(h.getAttribute("aria-level") || h.tagName.slice(1)));
    const problems = [];
    if (levels[0] !== 1) problems.push(`first heading is h${levels[0]}: ${found[0] && found[0].textContent.trim()}`);
    if (levels.filter((l) => l === 1).length !== 1) problems.push(`${levels.filter((l) => l === 1).length} h1 headings`);
    levels.forEach((level, i) => {
      if (i && level > levels[i - 1] + 1) problems.push(`h${levels[i - 1]} → h${level}: ${found[i].textContent.trim().slice(0, 40)}`);
    });
    return problems;
  }

  // Text written in Han characters sits inside an element whose lang is Chinese, whatever the
  // page's own language, so a screen reader switches voice for it.
  function languages() {
    const problems = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const el = node.parentElement;
      if (!/\p{Script=Han}/u.test(node.data) || el.closest("script, style")) continue;
      const lang = (el.closest("[lang]") || document.documentElement).getAttribute("lang") || "";
      if (!lang.toLowerCase().startsWith("zh")) problems.push(`${describe(el)} "${node.data.trim().slice(0, 30)}" in lang="${lang}"`);
    }
    return problems;
  }

  // Images and drawings say what they show (alt, aria-label/-labelledby or an SVG <title>),
  // unless hidden from assistive technology as decoration.
  function pictures() {
    const problems = [];
    for (const img of document.querySelectorAll("img, [role=img]")) {
      if (img.closest("[aria-hidden=true]")) continue;
      const named = img.hasAttribute("alt") || img.getAttribute("aria-label") || img.getAttribute("aria-labelledby")
        || (img.tagName.toLowerCase() === "svg" && img.querySelector(":scope > title"));
      if (!named) problems.push(`${describe(img)} has no text alternative`);
    }
    for (const svg of document.querySelectorAll("svg")) {
      if (svg.closest("[aria-hidden=true]") || svg.parentElement.closest("svg")) continue;
      const title = svg.querySelector(":scope > title");
      if (!(svg.getAttribute("aria-label") || svg.getAttribute("aria-labelledby") || (title && title.textContent.trim()))) {
        problems.push(`${describe(svg)} has no text alternative`);
      }
    }
    return problems;
  }

  // The page scrolls only vertically; a wide element is reported with its right edge.
  function overflow() {
    const width = document.documentElement.clientWidth;
    if (document.documentElement.scrollWidth <= width) return [];
    const wide = [...document.body.querySelectorAll("*")]
      .filter((el) => rendered(el) && el.getBoundingClientRect().right > width + 0.5)
      .filter((el) => !el.parentElement || el.parentElement.getBoundingClientRect().right <= width + 0.5);
    return [`scrollWidth ${document.documentElement.scrollWidth} > ${width}`,
      ...wide.slice(0, 8).map((el) => `${describe(el)} right=${Math.round(el.getBoundingClientRect().right)}`)];
  }

  // The focused element: what it is, and whether its outline or shadow differ from unfocused.
  function focused(wanted) {
    const el = document.activeElement;
    if (!el || el === document.body) return null;
    // What draws a ring: an outline that is there (a style, a width), a shadow; on a drawing
    // (SVG) also a stroke or fill, of the element or a shape inside it.
    const ring = () => [el, ...el.querySelectorAll("*")].slice(0, 50).map((node) => {
      const s = getComputedStyle(node);
      const outline = s.outlineStyle !== "none" && parseFloat(s.outlineWidth) > 0
        ? [s.outlineStyle, s.outlineWidth, s.outlineColor, s.outlineOffset].join(" ") : "";
      const drawn = node instanceof SVGElement ? [s.stroke, s.strokeWidth, s.fill].join(" ") : "";
      return [outline, s.boxShadow === "none" ? "" : s.boxShadow, drawn].join(" | ");
    }).join(" ; ");
    const on = ring();
    el.blur();
    const off = ring();
    el.focus();
    return { element: describe(el), href: el.getAttribute("href"), wanted: el.matches(wanted), visible: on !== off, on, off };
  }

  return { contrast, headings, languages, pictures, overflow, focused };
})();
