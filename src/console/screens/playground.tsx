// Placeholder until this screen is built.
import type { ScreenProps } from "../screens";
import { Page } from "../ui/page";

export default function Screen(_props: ScreenProps) {
  return <Page title="playground">Not built yet.</Page>;
}
