// Line diff (longest common subsequence, written for this page) and blame over a document's versions.

/** The edit script from `a` to `b` (arrays of lines): [{kind: "same"|"del"|"add", line, from?}]. */
export function diffLines(a, b) {
  const n = a.length;
  const m = b.length;
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      out.push({ kind: "same", line: b[j], from: i, to: j });
      i++;
      j++;
    } else if (lcs[i + 1][j] >= lcs[i][j + 1]) {
      out.push({ kind: "del", line: a[i++] });
    } else {
      out.push({ kind: "add", line: b[j], to: j++ });
    }
  }
  while (i < n) out.push({ kind: "del", line: a[i++] });
  while (j < m) out.push({ kind: "add", line: b[j], to: j++ });
  return out;
}

export function lines(text) {
  if (!text) return [];
  const split = text.split("\n");
  if (split[split.length - 1] === "") split.pop();
  return split;
}

/**
 * Blame: `versions` oldest first, each {version, author, turnId, text}. Each line of the last one is
 * attributed to the version that introduced it (a line kept across versions keeps its origin).
 */
export function blame(versions) {
  let origins = [];
  let previous = [];
  for (const v of versions) {
    const current = lines(v.text);
    const next = new Array(current.length);
    for (const step of diffLines(previous, current)) {
      if (step.kind === "same") next[step.to] = origins[step.from];
      else if (step.kind === "add") next[step.to] = v;
    }
    origins = next;
    previous = current;
  }
  return previous.map((line, index) => ({ line, number: index + 1, origin: origins[index] }));
}
