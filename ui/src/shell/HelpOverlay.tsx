import { useUi } from "../store/ui";
import { SHORTCUTS } from "./shortcuts";

export function HelpOverlay() {
  const open = useUi((s) => s.helpOpen);
  const setHelp = useUi((s) => s.setHelp);
  if (!open) return null;
  return (
    <div className="overlay" role="dialog" aria-modal="true" aria-label="Keyboard shortcuts" onClick={() => setHelp(false)}>
      <div className="dialog" onClick={(e) => e.stopPropagation()}>
        <div className="dialog-head">
          <h2>Keyboard shortcuts</h2>
          <button type="button" autoFocus onClick={() => setHelp(false)} aria-label="Close help">
            ✕
          </button>
        </div>
        <table className="shortcuts">
          <tbody>
            {SHORTCUTS.map((s) => (
              <tr key={s.keys}>
                <td>
                  <kbd>{s.keys}</kbd>
                </td>
                <td>{s.what}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
