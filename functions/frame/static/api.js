// The API client: every call carries the signed-in person's token; errors keep the API's stable code.

let token = null;

/** Locally `dev:<user>` (the local gateway's dev auth, loopback only); on AWS a JWT from the issuer. */
export function signIn(bearer) {
  token = bearer;
}

export class ApiError extends Error {
  constructor(status, body) {
    const error = (body && body.error) || { code: `HTTP_${status}`, message: "unexpected answer" };
    super(`${error.code}: ${error.message}`);
    this.status = status;
    this.code = error.code;
    this.body = body || {};
  }
}

export async function call(method, path, { body, headers } = {}) {
  const sent = { ...(headers || {}) };
  if (token) sent.Authorization = `Bearer ${token}`;
  if (body !== undefined) sent["Content-Type"] = "application/json";
  const response = await fetch(path, {
    method,
    headers: sent,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: "no-store",
  });
  const text = await response.text();
  const parsed = text ? JSON.parse(text) : null;
  if (!response.ok) throw new ApiError(response.status, parsed);
  return parsed;
}

const ws = (id) => `/v1/workspaces/${encodeURIComponent(id)}`;
const conv = (id) => `/v1/conversations/${encodeURIComponent(id)}`;
const base = (version) => ({ "X-Base-Version": String(version) });

export const api = {
  createWorkspace: (name, shareType) => call("POST", "/v1/workspaces", { body: { name, shareType } }),
  workspaces: () => call("GET", "/v1/workspaces?limit=50"),
  workspace: (id) => call("GET", ws(id)),
  keySessions: (id) => call("GET", `${ws(id)}/key-sessions?limit=100`),
  read: (id) => call("GET", `${ws(id)}/memory`),
  save: (id, content, version) => call("PUT", `${ws(id)}/memory`, { body: { content }, headers: base(version) }),
  clear: (id, version) => call("POST", `${ws(id)}/memory/clear`, { headers: base(version) }),
  undo: (id, restoreVersion, version) =>
    call("POST", `${ws(id)}/memory/undo`, { body: { restoreVersion }, headers: base(version) }),
  versions: (id, limit = 100) => call("GET", `${ws(id)}/memory/versions?limit=${limit}`),
  version: (id, n) => call("GET", `${ws(id)}/memory/versions/${n}`),
  /** A document proposal as the turn gave it, applied on `version` (its own base, or the current one). */
  applyProposal: (id, proposal, version) => {
    const { edits, baseVersion, clearGeneration } = proposal;
    const body = { proposal: { edits, baseVersion, clearGeneration } };
    return call("POST", `${ws(id)}/memory/proposals/apply`, { body, headers: base(version) });
  },
  policy: (id) => call("GET", `${ws(id)}/memory/policy`),
  setPolicy: (id, mode, expectedRevision) =>
    call("PUT", `${ws(id)}/memory/policy`, { body: { mode, expectedRevision } }),
  setAi: (id, enabled) => call("PUT", `${ws(id)}/ai`, { body: { enabled } }),
  openKeySession: (id, ttlSeconds, scopes) =>
    call("POST", `${ws(id)}/key-sessions`, { body: { ttlSeconds, scopes } }),
  revokeKeySession: (id, ks) => call("DELETE", `${ws(id)}/key-sessions/${encodeURIComponent(ks)}`),
  startTurn: (c, body) => call("POST", `${conv(c)}/turns`, { body }),
  turn: (c, turnId) => call("GET", `${conv(c)}/turns/${encodeURIComponent(turnId)}`),
  receipts: (c) => call("GET", `${conv(c)}/memory-receipts?limit=200`),
  entries: (id, { scope, type, cursor } = {}) => call("GET", `${ws(id)}/entries?${query({ scope, type, cursor })}`),
  entry: (id, entryId) => call("GET", entryPath(id, entryId)),
  entryHistory: (id, entryId) => call("GET", `${entryPath(id, entryId)}/history?limit=100`),
  createEntry: (id, body) => call("POST", `${ws(id)}/entries`, { body }),
  supersedeEntry: (id, entryId, body, revision) =>
    call("PUT", entryPath(id, entryId), { body, headers: { "X-Base-Revision": String(revision) } }),
  forgetEntry: (id, entryId) => call("DELETE", entryPath(id, entryId)),
  pages: (id) => call("GET", `${ws(id)}/pages?limit=100`),
  page: (id, pageId) => call("GET", pagePath(id, pageId)),
  fileEntry: (id, pageId, entryId, revision) =>
    call("PUT", `${pagePath(id, pageId)}/entries/${encodeURIComponent(entryId)}`, { body: { revision } }),
  unfileEntry: (id, pageId, entryId, revision) =>
    call("DELETE", `${pagePath(id, pageId)}/entries/${encodeURIComponent(entryId)}?revision=${revision}`),
  candidates: (id, cursor) => call("GET", `${ws(id)}/candidates?${query({ cursor })}`),
  audit: (id, { since, until, actor, kind, cursor } = {}) =>
    call("GET", `${ws(id)}/audit?${query({ since, until, actor, kind, cursor })}`),
  decideCandidate: (id, candidateId, decision, revision) =>
    call("POST", `${ws(id)}/candidates/${encodeURIComponent(candidateId)}/${decision}`, { body: { revision } }),
};

function pagePath(id, pageId) {
  return `${ws(id)}/pages/${encodeURIComponent(pageId)}`;
}

function entryPath(id, entryId) {
  return `${ws(id)}/entries/${encodeURIComponent(entryId)}`;
}

/** A query string of the given values that are set (`limit` 20, the routes' page). */
function query(values) {
  const params = new URLSearchParams({ limit: "20" });
  for (const [name, value] of Object.entries(values)) if (value) params.set(name, value);
  return params.toString();
}
