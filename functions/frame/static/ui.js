// Shared page helpers: the status and error lines, actions, table cells, empty states and the views' navigation.
// Stored text only ever goes into the page as text (textContent, value), never as HTML.
import { explain } from "./messages.js";

export const $ = (id) => document.getElementById(id);

/** What every module shares of the open workspace. */
export const state = {
  user: null,
  ws: null,
  view: null,
  base: 0,
  saved: "",
  readOnly: false,
  conflict: false, // the editor shows a conflict the person has not resolved
  saving: null, // the in-flight Save's promise (docs/decisions/0065)
};

export function say(text) {
  $("status").textContent = text;
  $("error").hidden = true;
  $("error-text").textContent = "";
  $("error-code").textContent = "";
}

/** A failure in words for people; the API's stable code and message go in a details line below. */
export function fail(error, headline) {
  const { text, detail } = explain(error);
  $("error-text").textContent = headline || text;
  $("error-code").textContent = detail;
  $("error-details").hidden = !detail;
  $("error").hidden = false;
  $("status").textContent = "";
}

/** Runs an action from a control, turning its failure into the message shown to the person. */
export function action(fn) {
  return async (event) => {
    if (event) event.preventDefault();
    try {
      await fn(event);
    } catch (error) {
      fail(error);
    }
  };
}

/** A table cell; it carries its column's header as `data-label`, which the narrow layout shows beside it. */
export function cell(row, text, className) {
  const td = row.insertCell();
  td.textContent = text;
  if (className) td.className = className;
  const header = row.closest("table")?.tHead?.rows[0]?.cells[td.cellIndex];
  if (header) td.dataset.label = header.textContent;
  return td;
}

export function button(text, onClick, className) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = text;
  if (className) b.className = className;
  b.addEventListener("click", action(onClick));
  return b;
}

export function element(tag, text, className) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (className) e.className = className;
  return e;
}

/** Shows `#<id>-empty` instead of the list or table `#<id>` when it holds nothing. */
export function empty(id, count) {
  $(id).hidden = count === 0;
  $(`${id}-empty`).hidden = count !== 0;
}

/** A line diff as +/- lines of a `<pre>` (each line its own span, so tests and people can read them). */
export function diffInto(pre, steps) {
  pre.replaceChildren();
  for (const step of steps) {
    const span = element("span", `${{ same: " ", add: "+", del: "-" }[step.kind]} ${step.line}`, step.kind);
    pre.append(span);
  }
}

export const VIEWS = ["editor", "inbox", "chat", "entries", "pages", "changes", "activity", "settings"];

/** One view at a time; the navigation marks the current one (`aria-current`). */
export function showView(name) {
  const target = VIEWS.includes(name) ? name : "editor";
  for (const view of VIEWS) $(view).hidden = view !== target;
  if (location.hash !== `#${target}`) history.replaceState(null, "", `#${target}`);
  for (const link of document.querySelectorAll("#views a")) {
    if (link.dataset.view === target) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

/** A local time for people (the ISO instant stays in the element's title). */
export function when(iso) {
  const at = new Date(iso);
  return Number.isNaN(at.getTime()) ? iso : at.toLocaleString();
}

const RELATIVE = new Intl.RelativeTimeFormat("en", { numeric: "auto" });
const UNITS = [["year", 31536e6], ["month", 2592e6], ["day", 864e5], ["hour", 36e5], ["minute", 6e4], ["second", 1e3]];

/** How long ago, for people ("5 minutes ago"); the exact instant goes in the element's title. */
export function ago(iso) {
  const ms = new Date(iso).getTime() - Date.now();
  if (Number.isNaN(ms)) return iso;
  if (Math.abs(ms) < 45e3) return "just now";
  const [unit, size] = UNITS.find(([, length]) => Math.abs(ms) >= length);
  return RELATIVE.format(Math.round(ms / size), unit);
}

/** A long id shortened for reading (its end, which differs between ids); the whole id goes in a title. */
export const shortId = (id) => (id && id.length > 14 ? `…${id.slice(-8)}` : id);
