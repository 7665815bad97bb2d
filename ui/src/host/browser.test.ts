import { describe, expect, it, vi } from "vitest";
import { localFromLocation } from "./browser";

function loc(href: string): Location {
  const u = new URL(href);
  return { hash: u.hash, pathname: u.pathname, search: u.search, origin: u.origin, protocol: u.protocol } as Location;
}

describe("browser host", () => {
  it("takes the key from #key=, remembers it and removes it from the address bar", () => {
    const hist = { state: null, replaceState: vi.fn() } as unknown as History;
    const b = localFromLocation(loc("http://127.0.0.1:8000/ui/#key=s3cr%2Bt"), hist);
    expect(b).toEqual({ baseUrl: "http://127.0.0.1:8000", key: "s3cr+t" });
    expect(hist.replaceState).toHaveBeenCalledWith(null, "", "/ui/");
    // A reload without the fragment keeps the key.
    expect(localFromLocation(loc("http://127.0.0.1:8000/ui/"), hist)?.key).toBe("s3cr+t");
  });

  it("keeps a path prefix in front of /ui/ and honours ?server= (dev server)", () => {
    expect(localFromLocation(loc("https://host/proxy/ui/index.html"), null)?.baseUrl).toBe("https://host/proxy");
    expect(localFromLocation(loc("http://localhost:5173/?server=http://127.0.0.1:8000"), null)?.baseUrl).toBe("http://127.0.0.1:8000");
  });
});
