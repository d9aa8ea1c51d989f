// Test pages: queue `init` from the query string (?key=pk_…&layout=…&persist=…&locale=…) without any inline script, and
// record widget events and CSP violations where the browser tests can read them.
const params = new URLSearchParams(location.search);
const config = { agentKey: params.get("key") ?? "" };
for (const name of ["layout", "persist", "theme", "strings", "target", "locale", "position"]) {
  const value = params.get(name);
  if (value) config[name] = value;
}
if (params.get("dir")) document.documentElement.dir = params.get("dir");
window.testEvents = [];
window.cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.cspViolations.push(`${event.violatedDirective} ${event.blockedURI}`);
});
window.AgentThreads = window.AgentThreads || { q: [] };
window.AgentThreads.q.push(["init", config]);
for (const name of ["ready", "open", "close", "message", "error"]) {
  window.AgentThreads.q.push(["on", name, (detail) => window.testEvents.push({ name, detail })]);
}
