// The customer-site test page: loads boot.js and the loader from the service at another origin (?service=…), in
// that order, as a customer's script tag would.
const service = new URLSearchParams(location.search).get("service") ?? location.origin;
for (const path of ["/test/boot.js", "/embed.js"]) {
  const script = document.createElement("script");
  script.src = new URL(path, service).href;
  script.async = false;
  document.head.append(script);
}
