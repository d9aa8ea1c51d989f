// Tool URL policy: only public https hosts, judged after the URL parser normalises every spelling of an address.
import { describe, expect, it } from "vitest";
import {
  localHttpAllowed,
  modelUrlIssues,
  modelUrlProblem,
  platformHosts,
  platformHostsOf,
  platformToolUrlIssues,
  toolUrlProblem,
} from "../../src/control/url-policy";

const PLATFORM = { platformHosts: ["agents.example.com"] };

describe("toolUrlProblem", () => {
  it.each([
    "https://tools.example.com/lookup",
    "https://tools.example.com:443/lookup?x=1",
    "https://api.example.co.uk/v1/hooks#frag",
    "https://8.8.8.8/hook",
    "https://[2606:4700:4700::1111]/hook",
    "https://TOOLS.Example.COM./lookup",
    "https://example.com",
    "https://other-agents.example.com/hook",
  ])("allows %s", (url) => {
    expect(toolUrlProblem(url, PLATFORM)).toBeNull();
  });

  it.each([
    // Scheme and shape.
    ["http://tools.example.com/lookup", "https"],
    ["ftp://tools.example.com/", "https"],
    ["javascript:alert(1)", "https"],
    ["//tools.example.com/lookup", "absolute"],
    ["not a url", "absolute"],
    ["", "absolute"],
    ["https://user:pass@tools.example.com/", "user name"],
    ["https://user@tools.example.com/", "user name"],
    ["https://tools.example.com:8443/", "port"],
    ["https://tools.example.com:80/", "port"],
    [`https://tools.example.com/${"a".repeat(2048)}`, "2048"],
    // Loopback, in every spelling the parser accepts.
    ["https://127.0.0.1", "loopback"],
    ["https://127.0.0.1:443/", "loopback"],
    ["https://127.1/", "loopback"],
    ["https://127.0.0.1./", "loopback"],
    ["https://2130706433/", "loopback"],
    ["https://0x7f000001/", "loopback"],
    ["https://0x7f.0.0.1/", "loopback"],
    ["https://0177.0.0.1/", "loopback"],
    ["https://017700000001/", "loopback"],
    ["https://%31%32%37.0.0.1/", "loopback"],
    ["https://１２７.０.０.１/", "loopback"],
    ["https://[::1]", "loopback"],
    ["https://[0:0:0:0:0:0:0:1]/", "loopback"],
    ["https://[::ffff:127.0.0.1]/", "loopback"],
    ["https://[::ffff:7f00:1]/", "loopback"],
    ["https://[::127.0.0.1]/", "loopback"],
    ["https://[64:ff9b::127.0.0.1]/", "loopback"],
    ["https://[2002:7f00:1::]/", "loopback"],
    ["https://localhost/", "loopback"],
    ["https://LOCALHOST./", "loopback"],
    ["https://api.localhost/", "loopback"],
    ["https://127.0.0.1.nip.io/", "loopback"],
    ["https://app.lvh.me/", "loopback"],
    // Names that resolve to loopback through public wildcard DNS.
    ["https://localhost.direct/", "loopback"],
    ["https://api.localhost.direct/hook", "loopback"],
    ["https://A.Localhost.Direct./hook", "loopback"],
    ["https://deep.sub.localhost/", "loopback"],
    ["https://127-0-0-1.sslip.io/", "loopback"],
    ["https://7f000001.nip.io/", "loopback"],
    ["https://app.xip.io/", "loopback"],
    ["https://readme.localtest.me/", "loopback"],
    ["https://lvh.me/", "loopback"],
    ["https://vcap.me/", "loopback"],
    ["https://traefik.me/", "loopback"],
    ["https://10-0-0-1.traefik.me/", "loopback"],
    ["https://app.local.gd/", "loopback"],
    ["https://x.fuf.me/", "loopback"],
    ["https://x.lacolhost.com/", "loopback"],
    ["https://x.yoogle.com/", "loopback"],
    ["https://localho.st/", "loopback"],
    // Metadata and link-local.
    ["https://169.254.169.254/", "metadata"],
    ["https://169.254.169.254/latest/meta-data/", "metadata"],
    ["https://2852039166/", "metadata"],
    ["https://[::ffff:169.254.169.254]/", "metadata"],
    ["https://[::ffff:a9fe:a9fe]/", "metadata"],
    ["https://[fe80::1]/", "link-local"],
    ["https://metadata.google.internal/computeMetadata/v1/", "public host"],
    ["https://metadata/", "fully qualified"],
    // Private networks.
    ["https://10.0.0.1/", "private"],
    ["https://10.255.255.255/", "private"],
    ["https://172.16.0.1/", "private"],
    ["https://172.31.255.255/", "private"],
    ["https://192.168.1.1/", "private"],
    ["https://100.64.0.1/", "private"],
    ["https://100.127.255.254/", "private"],
    ["https://[fc00::1]/", "private"],
    ["https://[fd12:3456::1]/", "private"],
    ["https://[::ffff:10.0.0.1]/", "private"],
    ["https://printer.local/", "public host"],
    ["https://db.internal/", "public host"],
    ["https://router.lan/", "public host"],
    ["https://intranet/", "fully qualified"],
    // Unspecified, multicast, broadcast, reserved.
    ["https://0.0.0.0/", "unspecified"],
    ["https://0/", "unspecified"],
    ["https://[::]/", "unspecified"],
    ["https://224.0.0.1/", "multicast"],
    ["https://255.255.255.255/", "multicast"],
    ["https://[ff02::1]/", "multicast"],
    ["https://240.0.0.1/", "reserved"],
    ["https://192.0.2.10/", "reserved"],
    ["https://[2001:db8::1]/", "reserved"],
    ["https://[2001::1]/", "reserved"],
    ["https://[100::1]/", "reserved"],
    ["https://[::ffff:8.8.8.8]/", "IPv6"],
    // The platform itself.
    ["https://agents.example.com/v1/health", "platform"],
    ["https://AGENTS.example.com./v1/health", "platform"],
    ["https://eu.agents.example.com/v1/health", "platform"],
  ])("refuses %s", (url, reason) => {
    const problem = toolUrlProblem(url, PLATFORM);
    expect(problem).not.toBeNull();
    expect(problem?.toLowerCase()).toContain(reason.toLowerCase());
  });

  it("refuses a loopback-wildcard name as a model endpoint and in any environment, but not a look-alike", () => {
    for (const url of ["https://llm.localhost.direct/v1", "https://traefik.me/v1"]) {
      expect(modelUrlProblem(url, { allowLocalHttp: true }), url).toBe(
        "must not point to a loopback address",
      );
    }
    // Only the names themselves and names below them: a host that merely ends in the same letters is public.
    for (const url of [
      "https://mylocalhost.direct/",
      "https://notnip.io/",
      "https://localhost.directory/",
      "https://lvh.me.example.com/",
    ]) {
      expect(toolUrlProblem(url), url).toBeNull();
    }
  });

  it("refuses the platform's host only when told which it is", () => {
    expect(toolUrlProblem("https://agents.example.com/hook")).toBeNull();
    expect(
      toolUrlProblem("https://agents.example.com/hook", { platformHosts: ["agents.example.com:8787"] }),
    ).toBe("must not point to this platform");
  });
});

describe("platformHostsOf", () => {
  it("takes the request's host and the configured ones, normalised", () => {
    expect(
      platformHostsOf("https://Agents.Example.com:8443/v1/agents", ["WIDGET.example.com.", "  "]),
    ).toEqual(["agents.example.com", "widget.example.com"]);
  });
});

describe("platformToolUrlIssues", () => {
  it("names each draft tool aimed at the platform, leaving other bad URLs to the schema", () => {
    const definition = {
      tools: [
        { url: "https://tools.example.com/a" },
        { url: "https://agents.example.com/v1/health" },
        { url: "http://agents.example.com/" },
        { url: 42 },
        null,
        { url: "https://eu.agents.example.com/hook" },
      ],
    };
    expect(platformToolUrlIssues(definition, ["agents.example.com"])).toEqual([
      { path: "tools.1.url", message: "must not point to this platform" },
      { path: "tools.5.url", message: "must not point to this platform" },
    ]);
    expect(platformToolUrlIssues({ tools: "nope" }, ["agents.example.com"])).toEqual([]);
    expect(platformToolUrlIssues(null, ["agents.example.com"])).toEqual([]);
  });
});

describe("platformHosts", () => {
  it("is PUBLIC_HOSTS plus the host the turn's request reached the platform on", () => {
    expect(platformHosts({ PUBLIC_HOSTS: "" })).toEqual([]);
    expect(platformHosts({ PUBLIC_HOSTS: "" }, "Threads.Example.com:443")).toEqual(["threads.example.com"]);
    expect(platformHosts({ PUBLIC_HOSTS: "agents.example.com, eu.agents.example.com" }, null)).toEqual([
      "agents.example.com",
      "eu.agents.example.com",
    ]);
  });
});

describe("modelUrlProblem", () => {
  it("applies the tools' policy to a model endpoint", () => {
    for (const url of [
      "http://llm.example.com/v1",
      "https://127.0.0.1/v1",
      "https://169.254.169.254/latest",
      "https://[::1]/v1",
      "https://10.0.0.5/v1",
      "https://metadata.google.internal/v1",
      "https://user:pw@llm.example.com/v1",
    ]) {
      expect(modelUrlProblem(url), url).not.toBeNull();
      expect(modelUrlProblem(url, { allowLocalHttp: true }), url).not.toBeNull();
    }
    expect(modelUrlProblem("https://llm.example.com/v1")).toBeNull();
    expect(modelUrlProblem("https://agents.example.com/v1", PLATFORM)).toBe(
      "must not point to this platform",
    );
  });

  it("admits local plain http only when allowed, and only development allows it", () => {
    for (const url of ["http://localhost:11434/v1", "http://127.0.0.1:8080/v1", "http://localhost/v1"]) {
      expect(modelUrlProblem(url, { allowLocalHttp: true }), url).toBeNull();
      expect(modelUrlProblem(url), url).not.toBeNull();
    }
    for (const url of ["http://127.0.0.2:8080/v1", "http://[::1]:8080/v1", "http://u:p@localhost:1/v1"]) {
      expect(modelUrlProblem(url, { allowLocalHttp: true }), url).not.toBeNull();
    }
    expect(localHttpAllowed("development")).toBe(true);
    expect(localHttpAllowed("staging")).toBe(false);
    expect(localHttpAllowed("production")).toBe(false);
  });
});

describe("modelUrlIssues", () => {
  const draft = (baseUrl: unknown) => ({ model: { provider: "openai-compatible", model: "m", baseUrl } });
  const production = { platformHosts: ["agents.example.com"], allowLocalHttp: false };

  it("names a local endpoint outside development and the platform's own host, leaving the rest to the schema", () => {
    expect(modelUrlIssues(draft("http://localhost:11434/v1"), production)).toEqual([
      { path: "model.baseUrl", message: "must use https" },
    ]);
    expect(modelUrlIssues(draft("https://agents.example.com/v1"), production)).toEqual([
      { path: "model.baseUrl", message: "must not point to this platform" },
    ]);
    expect(
      modelUrlIssues(draft("http://localhost:11434/v1"), { ...production, allowLocalHttp: true }),
    ).toEqual([]);
    expect(modelUrlIssues(draft("https://10.0.0.5/v1"), production)).toEqual([]);
    expect(modelUrlIssues(draft(42), production)).toEqual([]);
    expect(modelUrlIssues({ model: null }, production)).toEqual([]);
  });
});

describe("the development loopback exception for tools and webhooks", () => {
  it("admits http://127.0.0.1:<port> and http://localhost:<port> only with allowLocalHttp", () => {
    for (const url of ["http://127.0.0.1:8788/hooks", "http://localhost:3000/tool"]) {
      expect(toolUrlProblem(url, { allowLocalHttp: localHttpAllowed("development") }), url).toBeNull();
      for (const environment of ["staging", "production"]) {
        expect(toolUrlProblem(url, { allowLocalHttp: localHttpAllowed(environment) }), url).not.toBeNull();
      }
    }
    // The exception is loopback plain http only: private networks and other spellings stay refused.
    for (const url of [
      "http://192.168.1.5:80/",
      "http://[::1]:8080/",
      "http://u:p@localhost:1/",
      "http://0.0.0.0:1/",
    ]) {
      expect(toolUrlProblem(url, { allowLocalHttp: true }), url).not.toBeNull();
    }
  });

  it("lets publishing name a local tool outside development, leaving every other bad URL to the schema", () => {
    const definition = {
      tools: [
        { url: "http://127.0.0.1:8788/tool" },
        { url: "http://10.0.0.1/tool" },
        { url: "https://ok.example.com" },
      ],
    };
    expect(platformToolUrlIssues(definition, [], true)).toEqual([]);
    expect(platformToolUrlIssues(definition, [], false)).toEqual([
      { path: "tools.0.url", message: "must use https" },
    ]);
  });
});
