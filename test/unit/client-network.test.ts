import { describe, expect, it } from "vitest";
import { clientNetwork } from "../../src/auth/rate-limit";

describe("the network a launch is limited as", () => {
  it.each([
    ["203.0.113.7", "203.0.113.7"],
    ["2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"],
    ["2001:0DB8:0001:0002:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"],
    ["2001:db8:1:2::1", "2001:db8:1:2::/64"],
    ["2001:db8::1", "2001:db8:0:0::/64"],
    ["::1", "0:0:0:0::/64"],
    ["[2001:db8:1:2::9]", "2001:db8:1:2::/64"],
    ["fe80::1%eth0", "fe80:0:0:0::/64"],
    ["::ffff:198.51.100.4", "198.51.100.4"],
    ["2001:db8:1:2:3:4:192.0.2.1", "2001:db8:1:2::/64"],
  ])("%s → %s", (ip, network) => {
    expect(clientNetwork(ip)).toBe(network);
  });

  it("groups every address of one /64 together and keeps neighbouring /64s apart", () => {
    const a = clientNetwork("2001:db8:aa:bb:1::1");
    expect(clientNetwork("2001:db8:aa:bb:ffff:ffff:ffff:fffe")).toBe(a);
    expect(clientNetwork("2001:db8:aa:bc::1")).not.toBe(a);
  });

  it.each(["unknown", "2001:db8:::1", "1:2:3:4:5:6:7:8:9", "2001:db8::g", "::ffff:300.1.1.1"])(
    "keeps %s, which is no IPv6 address, as it came",
    (ip) => {
      expect(clientNetwork(ip)).toBe(ip);
    },
  );
});
