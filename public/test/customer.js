// The customer-site test page: loads boot.js and the loader from the service at another origin (?service=…), in
// that order, as a customer's script tag would. Only a loopback service is followed (the server's page policy allows
// no other): a link must never be able to put another site's script on this origin.
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** The service's origin: this page's own without ?service=, a loopback origin as given, else null. */
function serviceOrigin() {
  const given = new URLSearchParams(location.search).get("service");
  if (given === null) return location.origin;
  let url;
  try {
    url = new URL(given);
  } catch {
    return null;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  return LOOPBACK_HOSTS.has(url.hostname) ? url.origin : null;
}

const service = serviceOrigin();
if (service === null) {
  document.addEventListener("DOMContentLoaded", () => {
    const notice = document.createElement("p");
    notice.setAttribute("role", "alert");
    notice.textContent = "Refused: ?service= must be a loopback origin (127.0.0.1, localhost or [::1]).";
    document.querySelector("main")?.append(notice);
  });
} else {
  for (const path of ["/test/boot.js", "/embed.js"]) {
    const script = document.createElement("script");
    script.src = new URL(path, service).href;
    script.async = false;
    document.head.append(script);
  }
}
