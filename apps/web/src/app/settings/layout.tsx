import type { ReactNode } from "react";
import { SettingsTabs } from "../../components/settings-tabs";

export default function SettingsLayout({ children }: { children: ReactNode }) {
  return (
    <>
      <SettingsTabs />
      {children}
    </>
  );
}
