// What the entry list says beside its rows (docs/decisions/0078): on its first page, what recall's rules block and
// index spend of their budgets for this person's turns (counts only, never the lines), and on every page how many
// matching entries were hidden because a cited source is gone. Numbers only, set as text.
import { $ } from "./ui.js";

/** Bytes as decimal kilobytes for people, to the nearest tenth, halves up: one decimal at most ("3.1", "8"). */
function kb(bytes) {
  const tenths = Math.floor((bytes + 50) / 100);
  return tenths % 10 ? `${Math.floor(tenths / 10)}.${tenths % 10}` : String(tenths / 10);
}

/** "Index: 12 of 100 lines, 3.1 of 8 KB — 5 entries left out" (a section without a line limit: "6 lines"). */
export function budgetText(name, budget) {
  const lines = budget.maxLines ? `${budget.lines} of ${budget.maxLines} lines` : `${budget.lines} lines`;
  const n = budget.leftOut;
  const left = budget.truncated ? `${n} ${n === 1 ? "entry" : "entries"} left out` : "nothing left out";
  return `${name}: ${lines}, ${kb(budget.bytes)} of ${kb(budget.maxBytes)} KB — ${left}`;
}

/** "2 entries hidden: their cited source is gone." */
export function hiddenText(count) {
  return count === 1
    ? "1 entry hidden: its cited source is gone."
    : `${count} entries hidden: their cited source is gone.`;
}

/** The first page's budgets, or nothing shown when a page carries none. */
export function showBudgets(budgets) {
  $("entries-budgets").hidden = !budgets;
  if (!budgets) return;
  $("budget-rules").textContent = budgetText("Rules", budgets.rules);
  $("budget-index").textContent = budgetText("Index", budgets.index);
  $("budget-left-out").hidden = !(budgets.rules.truncated || budgets.index.truncated);
}

/** How many entries the pages listed so far hid (none: the line is not shown). */
export function showHidden(count) {
  $("entries-hidden").textContent = count ? hiddenText(count) : "";
  $("entries-hidden").hidden = !count;
}

export function hideBudgets() {
  showBudgets(null);
  showHidden(0);
}
