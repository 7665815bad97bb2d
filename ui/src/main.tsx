import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App";
import { useBackends } from "./features/backends/backendStore";
import { useSettings } from "./features/settings/settingsStore";
import { initHost } from "./host";
import { linkFromHash, useUi, type Theme } from "./store/ui";
import "./styles/app.css";

async function start() {
  // Read before the host takes the session key out of the address.
  const openLink = linkFromHash(window.location.hash);
  const h = await initHost();
  useUi.setState({ theme: h.loadPref<Theme>("theme") ?? "system", openLink });
  useSettings.getState().load();
  void useBackends.getState().load();
  const queryClient = new QueryClient({ defaultOptions: { queries: { staleTime: 2000, refetchOnWindowFocus: true } } });
  const root = document.getElementById("root");
  if (!root) throw new Error("no #root element");
  createRoot(root).render(
    <StrictMode>
      <QueryClientProvider client={queryClient}>
        <App />
      </QueryClientProvider>
    </StrictMode>,
  );
}

void start();
