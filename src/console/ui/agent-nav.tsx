// The links between an agent's pages (settings, draft, playground, versions, releases, evals), the current one marked.
import { href } from "../router";

const SECTIONS: [string, string][] = [
  ["", "Settings"],
  ["/draft", "Draft"],
  ["/playground", "Playground"],
  ["/versions", "Versions"],
  ["/releases", "Releases"],
  ["/evals", "Evals"],
];

export type AgentSection = "settings" | "draft" | "playground" | "versions" | "releases" | "evals";

export function AgentNav(props: { agentId: string; current: AgentSection }) {
  const base = `/agents/${encodeURIComponent(props.agentId)}`;
  return (
    <nav class="subnav" aria-label="This agent">
      <ul>
        {SECTIONS.map(([suffix, label]) => {
          const name = (suffix.slice(1) || "settings") as AgentSection;
          return (
            <li key={name}>
              <a href={href(`${base}${suffix}`)} aria-current={props.current === name ? "page" : undefined}>
                {label}
              </a>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
