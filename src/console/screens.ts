// Every screen but sign-in loads on demand: the first screen carries only the shell (its budget: ≤ 80 KB gzip, scripts/check-console-budget.mjs).
import type { ComponentType } from "preact";

export type ScreenProps = { params: Record<string, string> };
type Loader = () => Promise<{ default: ComponentType<ScreenProps> }>;

export const SCREENS: Record<string, Loader> = {
  agents: () => import("./screens/agents"),
  agent: () => import("./screens/agent"),
  draft: () => import("./screens/draft"),
  playground: () => import("./screens/playground"),
  versions: () => import("./screens/versions"),
  releases: () => import("./screens/releases"),
  evals: () => import("./screens/evals"),
  sessions: () => import("./screens/sessions"),
  session: () => import("./screens/session"),
  approvals: () => import("./screens/approvals"),
  analytics: () => import("./screens/analytics"),
  keys: () => import("./screens/keys"),
  secrets: () => import("./screens/secrets"),
  webhooks: () => import("./screens/webhooks"),
};
