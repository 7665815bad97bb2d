// A browser observation's screenshot in the timeline: a thumbnail that opens the full picture,
// so a session can be reviewed step by step after the fact. The full picture opens in a portal:
// the timeline's rows are positioned by the virtual list, which would clip or shift an overlay.
import { useEffect, useRef, useState } from "react";
import { createPortal } from "react-dom";

/** The image type of base64 screenshot data, from its first bytes (PNG or JPEG; else null). */
export function screenshotMime(data: string): "image/png" | "image/jpeg" | null {
  if (data.startsWith("iVBOR")) return "image/png";
  if (data.startsWith("/9j/")) return "image/jpeg";
  return null;
}

/** `data:` URL of a screenshot, or null if the data is neither PNG nor JPEG. */
export function screenshotSrc(data: string): string | null {
  const mime = screenshotMime(data);
  return mime ? `data:${mime};base64,${data}` : null;
}

export function Screenshot({ data, label }: { data: string; label: string }) {
  const [open, setOpen] = useState(false);
  const close = useRef<HTMLButtonElement>(null);
  const thumb = useRef<HTMLButtonElement>(null);
  const src = screenshotSrc(data);
  useEffect(() => {
    if (open) close.current?.focus();
  }, [open]);
  const shut = () => {
    setOpen(false);
    thumb.current?.focus();
  };
  if (!src) return <div className="hint">(a screenshot in an unknown format)</div>;
  return (
    <>
      <button ref={thumb} type="button" className="shot-thumb" onClick={() => setOpen(true)} aria-label={`Enlarge the screenshot: ${label}`} title="Enlarge">
        <img src={src} alt={`Screenshot: ${label}`} loading="lazy" />
      </button>
      {open &&
        createPortal(
          <div
            className="overlay"
            role="dialog"
            aria-modal="true"
            aria-label={`Screenshot: ${label}`}
            onClick={shut}
            onKeyDown={(e) => {
              if (e.key === "Escape") {
                e.stopPropagation();
                shut();
              }
            }}
          >
            <div className="dialog shot-dialog" onClick={(e) => e.stopPropagation()}>
              <div className="dialog-head">
                <h2>{label}</h2>
                <button ref={close} type="button" onClick={shut} aria-label="Close the screenshot">
                  ✕
                </button>
              </div>
              <img className="shot-full" src={src} alt={`Screenshot: ${label}`} />
            </div>
          </div>,
          document.body,
        )}
    </>
  );
}
