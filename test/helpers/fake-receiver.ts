// Webhook receivers without a network: the test events object's fetch reaches them by URL; each records what it got.
import { Webhook } from "standardwebhooks";
import { unique } from "./tenants";

export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  userAgent: string | null;
  redirect: RequestInit["redirect"];
  body: string;
  /** The status this request was answered with. */
  answered: number;
}

export interface FakeReceiver {
  url: string;
  received: Received[];
  /** Answers in order, the last one repeating (a status, or a thrown network error). */
  answers: (number | "network_error")[];
}

const receivers = new Map<string, FakeReceiver>();

/** A receiver at a new public https URL (the URL policy admits it in every environment). */
export function fakeReceiver(...answers: (number | "network_error")[]): FakeReceiver {
  const receiver: FakeReceiver = {
    url: `https://hooks.example.com/${unique("rx")}`,
    received: [],
    answers: answers.length > 0 ? answers : [200],
  };
  receivers.set(receiver.url, receiver);
  return receiver;
}

/** The fetch the test events object sends with: a URL without a receiver is unreachable. */
export const receiverFetch: typeof fetch = async (input, init) => {
  const url = String(input instanceof Request ? input.url : input);
  const receiver = receivers.get(url);
  if (receiver === undefined) throw new TypeError("Network connection lost.");
  const headers = new Headers(init?.headers);
  const answer = receiver.answers[Math.min(receiver.received.length, receiver.answers.length - 1)] ?? 200;
  receiver.received.push({
    id: headers.get("webhook-id") ?? "",
    timestamp: headers.get("webhook-timestamp") ?? "",
    signature: headers.get("webhook-signature") ?? "",
    userAgent: headers.get("user-agent"),
    redirect: init?.redirect,
    body: typeof init?.body === "string" ? init.body : "",
    answered: answer === "network_error" ? 0 : answer,
  });
  if (answer === "network_error") throw new TypeError("Network connection lost.");
  return new Response(answer < 300 ? "ok" : "no", { status: answer });
};

/** Verifies one request with the reference Standard Webhooks library; returns the parsed body (throws if invalid). */
export function verified(secret: string, request: Received): unknown {
  return new Webhook(secret).verify(request.body, {
    "webhook-id": request.id,
    "webhook-timestamp": request.timestamp,
    "webhook-signature": request.signature,
  });
}
