// One real widget in a same-origin frame of /console/playground-frame: the page loads /embed.js, and this side
// starts it through the frame's window.AgentThreads with `identify(getLaunchToken)`, where each token is a
// preview session launched with the console's cookie and CSRF header. The widget is one per page, hence one frame
// per conversation; nothing is persisted (`persist: memory`), so every page load starts fresh preview threads.
import type { Ref } from "preact";
import { useImperativeHandle, useRef, useState } from "preact/hooks";
import { AgentThreadsError } from "../../client/http";
import { describeError } from "../api";

/** What `POST …/draft/preview-session` answers: a launch body the widget takes as is. */
export interface LaunchBody {
  token: string;
  threadId: string;
  websocketUrl: string;
  expiresAt: string;
  [extra: string]: unknown;
}

/** The loader's API inside the frame (docs/widget.md). */
interface FrameApi {
  init(options: Record<string, unknown>): void;
  identify(getLaunchToken: (reason: string) => Promise<LaunchBody>): void;
  send(text: string): void;
  newConversation(): void;
  on(event: string, listener: (detail: unknown) => void): void;
}

export interface FrameHandle {
  send(text: string): void;
  newConversation(): void;
}

const FRAME_URL = "/console/playground-frame";

/** A refusal that launching again will not fix (the draft is invalid, the version is gone): stop and say so. */
const isFinal = (error: unknown) =>
  error instanceof AgentThreadsError && [400, 403, 404, 409, 412].includes(error.status);

export function WidgetFrame(props: {
  title: string;
  /** Launches a preview thread; `threadId` set when the widget refreshes the token of the thread it has. */
  launch: (threadId: string | undefined) => Promise<LaunchBody>;
  handle: Ref<FrameHandle | undefined>;
}) {
  const ref = useRef<HTMLIFrameElement>(null);
  const widget = useRef<FrameApi>();
  const [attempt, setAttempt] = useState(0);
  const [state, setState] = useState<{ kind: "loading" | "ready" | "failed"; text: string }>({
    kind: "loading",
    text: "Starting…",
  });
  const launchRef = useRef(props.launch);
  launchRef.current = props.launch;

  useImperativeHandle(
    props.handle,
    () => ({
      send: (text) => widget.current?.send(text),
      newConversation: () => widget.current?.newConversation(),
    }),
    [],
  );

  const start = () => {
    const api = (ref.current?.contentWindow as (Window & { AgentThreads?: FrameApi }) | null)?.AgentThreads;
    if (!api) {
      setState({ kind: "failed", text: "The widget did not load in its frame." });
      return;
    }
    let threadId: string | undefined;
    api.init({ layout: "fullpage", persist: "memory" });
    api.on("ready", (detail) => {
      const d = detail as { threadId?: string; agent?: { name?: string; version?: number | null } };
      const version = d.agent?.version ? `, version ${d.agent.version}` : "";
      setState({ kind: "ready", text: `Connected to ${d.agent?.name ?? "the agent"}${version}.` });
    });
    api.on("error", (detail) => {
      const d = detail as { code?: string; message?: string };
      setState((s) =>
        s.kind === "failed" ? s : { kind: "loading", text: `${d.code ?? "error"}: ${d.message ?? ""}` },
      );
    });
    api.identify(async (reason) => {
      try {
        const body = await launchRef.current(reason === "start" ? undefined : threadId);
        threadId = body.threadId;
        return body;
      } catch (error) {
        if (isFinal(error)) setState({ kind: "failed", text: describeError(error) });
        throw error;
      }
    });
    widget.current = api;
  };

  return (
    <div class="frame">
      {state.kind === "failed" ? (
        <div class="frame-failed">
          <p class="note error" role="alert">
            {state.text}
          </p>
          <button
            type="button"
            onClick={() => {
              widget.current = undefined;
              setState({ kind: "loading", text: "Starting…" });
              setAttempt((n) => n + 1);
            }}
          >
            Try again
          </button>
        </div>
      ) : (
        // Removed on a final failure: the frame's widget would otherwise go on retrying out of sight.
        <iframe key={attempt} ref={ref} src={FRAME_URL} title={props.title} onLoad={start} />
      )}
      <p class="hint" role="status">
        {state.kind === "failed" ? "" : state.text}
      </p>
    </div>
  );
}
