// The demo page: takes the demo agent's public key from ?key= (printed by `npm run dev`) and queues the widget.
const key = new URLSearchParams(location.search).get("key");

window.AgentThreads = window.AgentThreads || { q: [] };
window.AgentThreads.q.push(["init", { agentKey: key ?? "", layout: "floating" }]);

document.getElementById("snippet-origin").textContent = location.origin;
if (key) document.getElementById("snippet-key").textContent = key;
else document.getElementById("missing-key").hidden = false;

for (const button of document.querySelectorAll("[data-action=open]")) {
  // Through the queue: works before and after the loader has run.
  button.addEventListener("click", () => window.AgentThreads.q.push(["open"]));
}
