// Messages for people: what happened and what to do, from the API's stable code. The code and the API's own
// message stay available in a details line (support asks for them), never as the headline.
import { ApiError } from "./api.js";

/** A request the page itself refused to send (nothing reached the API): a stable code of the page's own. */
export class PageRefusal extends Error {
  constructor(code) {
    super(code);
    this.code = code;
  }
}

const SAID = {
  STALE_BASE_VERSION: "Someone saved a newer version while you were editing. Nothing was saved; your draft is kept.",
  PROPOSAL_CLEARED:
    "This proposal was made before the memory was cleared, so applying it could bring cleared text back. " +
    "It was not applied.",
  INVALID_EDITS: "These edits no longer fit the memory as it is now (a line they change is gone or appears twice). " +
    "Nothing was applied.",
  FORBIDDEN: "Your role in this workspace does not allow that. Nothing was changed.",
  WORKSPACE_NOT_FOUND: "No workspace with that id is open to you. Check the id, or ask its owner to add you.",
  PAYLOAD_TOO_LARGE: "That is too large to save. Nothing was saved; your text is kept so you can shorten it.",
  KEY_SESSION_INVALID: "That key session has ended or was revoked. Open a new one in Settings, or send without one.",
  KEY_SESSION_NOT_FOUND: "That key session no longer exists. Open a new one in Settings.",
  SCOPE_EXCEEDS_ROLE: "Your role cannot delegate that. Nothing was opened; a key session you open here may read only.",
  KEY_SESSION_REQUIRED: "This needs a key session: open one in Settings and choose it for the turn.",
  STALE_REVISION: "This was changed elsewhere since you loaded it. Nothing was changed; what is current is shown.",
  CANDIDATE_NOT_FOUND: "This proposal was already decided elsewhere. Nothing was changed; the list is reloaded.",
  STALE_POLICY_REVISION: "The policy was changed elsewhere meanwhile. Nothing was changed; the current one is shown.",
  AI_DISABLED: "The workspace AI is off. The owner turns it on in Settings.",
  MEMORY_OFF: "The memory policy is off for this workspace, so the assistant neither reads nor writes it.",
  VERSION_NOT_FOUND: "There is no such version.",
  VERSION_PURGED: "That version was purged: its text is gone.",
  ENTRY_NOT_FOUND: "There is no such entry, or it is not visible to you.",
  ENTRY_FORGOTTEN: "That entry was forgotten: only a tombstone without text is left.",
  RATE_LIMITED: "Too many requests just now. Wait a moment, then try again.",
  UNAUTHENTICATED: "Your sign-in is not valid any more. Sign in again.",
  UNAVAILABLE: "The service is unavailable just now. Try again in a moment; nothing was changed.",
  INTERNAL: "Something went wrong on our side. Nothing was changed; try again.",
  INVALID_REQUEST: "Some of what you entered is not valid. Nothing was changed.",
  CONVERSATION_WORKSPACE_MISMATCH: "That conversation belongs to another workspace. Start a new conversation here.",
  TURN_NOT_FOUND: "That turn is not known (any more).",
  SAVE_STILL_RUNNING:
    "Your Save has not finished after 5 seconds, so the message was not sent: the assistant would not see it. " +
    "Your message is kept; send it again once the Save is done.",
  SAVE_NOT_SAVED:
    "Your Save did not go through, so the message was not sent: the assistant would not see it. Resolve it in " +
    "Memory (save again, or take the newer text), then send; your message is kept.",
  APPLY_SAVE_STILL_RUNNING:
    "Your Save has not finished after 5 seconds, so the proposal was not applied. Apply it again once the Save " +
    "is done.",
  APPLY_SAVE_NOT_SAVED:
    "Your Save did not go through, so the proposal was not applied. Resolve it in Memory (save again, or take " +
    "the newer text), then apply it.",
};

/** {text, detail}: the headline for people and the details line (code and the API's message, if any). */
export function explain(error) {
  if (error instanceof ApiError) {
    const detail = `${error.code}: ${error.body?.error?.message || "no message"}`;
    return { text: SAID[error.code] || "The request was refused. Nothing was changed.", detail };
  }
  if (error instanceof PageRefusal) {
    return { text: SAID[error.code], detail: `${error.code}: the page sent nothing` };
  }
  if (error instanceof TypeError) {
    return { text: "The service could not be reached. Check your connection; nothing was changed.", detail: "" };
  }
  return { text: error instanceof Error ? error.message : String(error), detail: "" };
}
