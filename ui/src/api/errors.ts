// Errors from a backend, turned into something a person can act on. Every failure the UI
// shows goes through `ApiError`, so "unauthorized" / "not found" / "server down" read the same
// everywhere and tests can assert on `kind`.

export type ApiErrorKind =
  | "network" // nothing answered (down, wrong port, CORS, DNS)
  | "unauthorized" // 401/403: wrong or missing session key
  | "not_found" // 404
  | "conflict" // 409 (already running, file changed on disk)
  | "too_large" // 413
  | "invalid" // 400/422
  | "busy" // 429
  | "server" // 5xx
  | "not_agent_server"; // answered, but not like an agent server

/** One entry of a 422's `detail` list: where the wrong value is (`["body", "max_cost"]`) and why. */
export interface FieldError {
  loc: readonly string[];
  msg: string;
}

export class ApiError extends Error {
  override readonly name = "ApiError";
  constructor(
    readonly kind: ApiErrorKind,
    message: string,
    readonly status?: number,
    readonly detail?: string,
    /** A 400/422's wrong fields, so a form can show each message beside its field. */
    readonly fields: readonly FieldError[] = [],
  ) {
    super(message);
  }
}

/** The entries of a FastAPI-style 422 list that name a field (`loc`); none for any other body. */
export function fieldErrorsOf(body: unknown): FieldError[] {
  if (typeof body !== "object" || body === null) return [];
  const d = (body as { detail?: unknown }).detail;
  if (!Array.isArray(d)) return [];
  const out: FieldError[] = [];
  for (const x of d as unknown[]) {
    if (typeof x !== "object" || x === null) continue;
    const item = x as { loc?: unknown; msg?: unknown };
    if (!Array.isArray(item.loc)) continue;
    out.push({ loc: item.loc.map(String), msg: typeof item.msg === "string" ? item.msg : "" });
  }
  return out;
}

/** The `detail` of a FastAPI-style error body (`{"detail": "..."}` or a 422 list). */
export function detailOf(body: unknown): string | undefined {
  if (typeof body === "string") return body.slice(0, 300) || undefined;
  if (typeof body !== "object" || body === null) return undefined;
  const d = (body as { detail?: unknown }).detail;
  if (typeof d === "string") return d;
  if (Array.isArray(d)) {
    return d
      .map((x: unknown) => {
        if (typeof x !== "object" || x === null) return String(x);
        const item = x as { loc?: unknown; msg?: unknown };
        const loc = Array.isArray(item.loc) ? item.loc.join(".") : "";
        return `${loc ? loc + ": " : ""}${String(item.msg ?? "")}`;
      })
      .join("; ");
  }
  return undefined;
}

export function errorFromStatus(status: number, body: unknown, what: string): ApiError {
  const detail = detailOf(body);
  const suffix = detail ? `: ${detail}` : "";
  if (status === 401 || status === 403)
    return new ApiError("unauthorized", `Unauthorized: the session key was refused (${what})`, status, detail);
  if (status === 404) return new ApiError("not_found", `Not found (${what})${suffix}`, status, detail);
  if (status === 409) return new ApiError("conflict", `Conflict (${what})${suffix}`, status, detail);
  if (status === 413) return new ApiError("too_large", `Too large (${what})${suffix}`, status, detail);
  if (status === 429) return new ApiError("busy", `The server is at capacity (${what})${suffix}`, status, detail);
  if (status === 400 || status === 422)
    return new ApiError("invalid", `Rejected by the server (${what})${suffix}`, status, detail, fieldErrorsOf(body));
  if (status >= 500) return new ApiError("server", `Server error ${status} (${what})${suffix}`, status, detail);
  return new ApiError("server", `Unexpected HTTP ${status} (${what})${suffix}`, status, detail);
}

export function networkError(baseUrl: string, cause: unknown): ApiError {
  const why = cause instanceof Error && cause.message ? ` (${cause.message})` : "";
  return new ApiError("network", `Cannot reach ${baseUrl}: the server is down or the URL is wrong${why}`);
}

/** A message for any thrown value. */
export function messageOf(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}
