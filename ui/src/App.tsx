import { useEffect } from "react";
import { Group, Panel, Separator } from "react-resizable-panels";
import { BackendSwitcher } from "./features/backends/BackendSwitcher";
import { useActiveBackend, useBackends } from "./features/backends/backendStore";
import { ConversationsPane } from "./features/conversations/ConversationsPane";
import { CostsDialog } from "./features/costs/CostsDialog";
import { SettingsDialog } from "./features/settings/SettingsDialog";
import { host } from "./host";
import { HelpOverlay } from "./shell/HelpOverlay";
import { KeyringBanner } from "./shell/KeyringBanner";
import { useGlobalShortcuts } from "./shell/shortcuts";
import { useThemeEffect } from "./shell/theme";
import { Workspace } from "./shell/Workspace";
import { lastConversationPref, useUi, type Theme } from "./store/ui";

export function App() {
  useThemeEffect();
  useGlobalShortcuts();
  const backend = useActiveBackend();
  const loaded = useBackends((s) => s.loaded);
  const conversationId = useUi((s) => s.conversationId);
  const theme = useUi((s) => s.theme);
  const setTheme = useUi((s) => s.setTheme);
  const setSettings = useUi((s) => s.setSettings);
  const setCosts = useUi((s) => s.setCosts);
  const setHelp = useUi((s) => s.setHelp);
  const hostKind = host().kind;

  // A conversation belongs to one backend: switching backends closes it.
  const backendId = backend?.id;
  useEffect(() => {
    // Reopen that backend's last conversation. Set directly, not through openConversation: this
    // only restores what was remembered and must not overwrite it (the effect also runs before
    // the backends have loaded).
    const link = useUi.getState().openLink;
    if (backendId && link) {
      // The page was opened on a conversation (`tandem replay open`): that one.
      useUi.setState({ conversationId: link.conversation });
      return;
    }
    const last = backendId ? host().loadPref<string>(lastConversationPref(backendId)) : null;
    useUi.setState({ conversationId: last ?? null });
  }, [backendId]);

  const nextTheme: Record<Theme, Theme> = { system: "dark", dark: "light", light: "system" };

  return (
    <div className="app">
      <header className="topbar">
        <span className="brand">Tandem</span>
        <BackendSwitcher />
        <span className="spacer" />
        {hostKind === "browser" && backend?.kind === "local" && <span className="muted small">served by {backend.baseUrl}</span>}
        <button type="button" onClick={() => setTheme(nextTheme[theme])} title="Theme: system → dark → light">
          Theme: {theme}
        </button>
        <button type="button" onClick={() => setCosts(true)} title="Spending per conversation, model and day, on every backend">
          Costs
        </button>
        <button type="button" onClick={() => setSettings(true)} title="Settings (Ctrl+,)">
          Settings
        </button>
        <button type="button" onClick={() => setHelp(true)} title="Keyboard shortcuts (?)" aria-label="Keyboard shortcuts">
          ?
        </button>
      </header>
      <KeyringBanner />
      <main className="main">
        {!loaded ? (
          <div className="empty">Starting…</div>
        ) : (
          <Group orientation="horizontal" className="panes">
            <Panel defaultSize="20%" minSize="12%" collapsible>
              <section className="pane fill" data-pane="conversations" aria-label="Conversations" tabIndex={-1}>
                <ConversationsPane backend={backend} />
              </section>
            </Panel>
            <Separator className="separator" />
            <Panel defaultSize="80%" minSize="40%">
              {backend && conversationId ? (
                <Workspace key={`${backend.id}/${conversationId}`} backend={backend} conversationId={conversationId} />
              ) : (
                <div className="empty big">
                  {backend ? "Open a conversation, or start a new one." : "Add a backend in Settings to begin."}
                  <div className="hint">Press ? for keyboard shortcuts.</div>
                </div>
              )}
            </Panel>
          </Group>
        )}
      </main>
      <SettingsDialog />
      <CostsDialog />
      <HelpOverlay />
    </div>
  );
}
