"use client";

import { FINAL_RUN_STATUSES, LIVE_FEED, type IntervalPoint, type LivePoints, type Run } from "@volley/contracts";
import { useCallback, useEffect, useRef, useState } from "react";
import type { Socket } from "socket.io-client";
import { apiFetch } from "./api-client";
import { upsertPoints } from "./upsert-points";

const POLL_MS = 1000;
/** While the feed pushes points, the summary (computed server-side from all frames) is re-read this often. */
const SUMMARY_REFRESH_MS = 5000;

export type LiveMode = "connecting" | "live" | "polling" | "ended" | "snapshot";

const isFinal = (s: Run["status"]) => FINAL_RUN_STATUSES.includes(s);

/**
 * A run and its timeline, kept current: pushed over the Socket.IO live feed (/live) while it is
 * connected, polled from the REST API every second while it is not (feed down, Redis away, an old
 * proxy). Stops when the run is final.
 */
export function useLiveRun(initialRun: Run, initialIntervals: IntervalPoint[], opts: { live?: boolean } = {}) {
  const [run, setRun] = useState(initialRun);
  const [intervals, setIntervals] = useState(initialIntervals);
  const [mode, setMode] = useState<LiveMode>(isFinal(initialRun.status) ? "ended" : "connecting");
  const [error, setError] = useState<string | null>(null);
  // Not live (a run shared from another org: the feed and the API answer for the active org only): the page's own data, as loaded.
  const final = isFinal(run.status) || opts.live === false;
  const runId = run.id;
  const socketRef = useRef<Socket | null>(null);

  const refresh = useCallback(async () => {
    const [r, i] = await Promise.all([apiFetch<Run>(`/api/v1/runs/${runId}`), apiFetch<{ intervals: IntervalPoint[] }>(`/api/v1/runs/${runId}/intervals`)]);
    setRun(r);
    setIntervals(i.intervals);
    setError(null);
    return r;
  }, [runId]);

  const refreshRun = useCallback(async () => {
    const r = await apiFetch<Run>(`/api/v1/runs/${runId}`);
    setRun(r);
    return r;
  }, [runId]);

  // The socket: subscribe on every (re)connect, then read the whole timeline once to fill any gap.
  useEffect(() => {
    if (final) {
      setMode("ended");
      return;
    }
    let socket: Socket | null = null;
    let closed = false;
    const listen = (socket: Socket) => {
      socket.on("connect", () => {
        socket
          .timeout(5000)
          .emitWithAck(LIVE_FEED.events.subscribe, { runId })
          .then((reply: { ok: boolean; error?: { message: string } }) => {
            if (!reply.ok) throw new Error(reply.error?.message ?? "subscribe refused");
            setMode("live");
            return refresh();
          })
          .catch(() => setMode("polling"));
      });
      socket.on("disconnect", () => setMode("polling"));
      socket.on("connect_error", () => setMode("polling"));
      socket.on(LIVE_FEED.events.points, (m: LivePoints) => {
        if (m.runId === runId) setIntervals((prev) => upsertPoints(prev, m.points));
      });
      socket.on(LIVE_FEED.events.status, () => {
        void refresh().catch(() => {});
      });
    };
    // Loaded only for a run that is not final: a finished run's page (the most opened) does without it.
    import("socket.io-client")
      .then(({ io }) => {
        if (closed) return;
        socket = io(LIVE_FEED.namespace, { transports: ["websocket", "polling"], reconnectionDelayMax: 5000, timeout: 5000 });
        socketRef.current = socket;
        listen(socket);
      })
      .catch(() => {
        if (!closed) setMode("polling");
      });
    return () => {
      closed = true;
      socket?.removeAllListeners();
      socket?.close();
      socketRef.current = null;
    };
  }, [final, runId, refresh]);

  // Polling: every second while the feed is not live; the summary every few seconds while it is.
  useEffect(() => {
    if (final || mode === "connecting") return;
    let cancelled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const every = mode === "live" ? SUMMARY_REFRESH_MS : POLL_MS;
    const tick = async () => {
      try {
        const r = mode === "live" ? await refreshRun() : await refresh();
        if (cancelled || isFinal(r.status)) {
          if (isFinal(r.status)) await refresh().catch(() => {});
          return;
        }
        setError(null);
      } catch (err) {
        if (cancelled) return;
        setError(err instanceof Error ? err.message : String(err));
      }
      if (!cancelled) timer = setTimeout(() => void tick(), every);
    };
    timer = setTimeout(() => void tick(), every);
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  }, [final, mode, refresh, refreshRun]);

  const shown: LiveMode = isFinal(run.status) ? "ended" : opts.live === false ? "snapshot" : mode;
  return { run, intervals, mode: shown, error, refresh };
}
