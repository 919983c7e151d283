// Markdown shown safely: a small subset (headings, lists, fenced code, paragraphs with their line breaks, inline
// `code` and **bold**) built as elements whose text is set with textContent, never parsed as HTML: a model's answer
// or a stored line like `<img onerror=…>` stays text.

const FENCE = /^(```|~~~)/;
const HEADING = /^(#{1,6})\s+(.*)$/;
const ITEM = /^\s*(?:[-*+]|\d+[.)])\s+(.*)$/;

/** Inline `code` and **bold** as elements; everything else as text nodes. */
function inline(parent, text) {
  const pattern = /(`[^`]+`|\*\*[^*]+\*\*)/g;
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    if (match.index > last) parent.append(document.createTextNode(text.slice(last, match.index)));
    const token = match[0];
    const node = document.createElement(token.startsWith("`") ? "code" : "strong");
    node.textContent = token.startsWith("`") ? token.slice(1, -1) : token.slice(2, -2);
    parent.append(node);
    last = match.index + token.length;
  }
  if (last < text.length) parent.append(document.createTextNode(text.slice(last)));
}

/** A document fragment for `text`: blocks in order, each line break kept. */
export function renderMarkdown(text) {
  const out = document.createDocumentFragment();
  const source = (text || "").replace(/\r\n/g, "\n").split("\n");
  let paragraph = null;
  let list = null;
  let code = null;
  const close = () => {
    paragraph = null;
    list = null;
  };
  for (const line of source) {
    if (code) {
      if (FENCE.test(line.trim())) code = null;
      else code.textContent += `${line}\n`;
      continue;
    }
    if (FENCE.test(line.trim())) {
      close();
      const pre = document.createElement("pre");
      code = document.createElement("code");
      pre.append(code);
      out.append(pre);
      continue;
    }
    if (!line.trim()) {
      close();
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      close();
      const h = document.createElement("p");
      h.className = `md-heading md-h${heading[1].length}`;
      inline(h, heading[2]);
      out.append(h);
      continue;
    }
    const item = ITEM.exec(line);
    if (item) {
      paragraph = null;
      if (!list) {
        list = document.createElement("ul");
        out.append(list);
      }
      const li = document.createElement("li");
      inline(li, item[1]);
      list.append(li);
      continue;
    }
    list = null;
    if (paragraph) paragraph.append(document.createElement("br"));
    else {
      paragraph = document.createElement("p");
      out.append(paragraph);
    }
    inline(paragraph, line);
  }
  return out;
}
