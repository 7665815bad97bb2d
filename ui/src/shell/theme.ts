// Dark and light themes are CSS variable sets on <html data-theme>. "system" follows the OS
// and changes with it.
import { useEffect } from "react";
import { useUi } from "../store/ui";

export function useThemeEffect(): void {
  const theme = useUi((s) => s.theme);
  useEffect(() => {
    const mq = window.matchMedia?.("(prefers-color-scheme: dark)");
    const apply = () => {
      const dark = theme === "dark" || (theme === "system" && (mq?.matches ?? true));
      document.documentElement.dataset.theme = dark ? "dark" : "light";
    };
    apply();
    mq?.addEventListener?.("change", apply);
    return () => mq?.removeEventListener?.("change", apply);
  }, [theme]);
}
