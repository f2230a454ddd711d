/**
 * The slice of socket.io-client 2 (installed as socket.io-client-v2) the socketio driver uses; it
 * ships no types. Referenced with a triple-slash directive from socketio-client.ts.
 */
declare module "socket.io-client-v2" {
  export interface SocketV2 {
    readonly connected: boolean;
    // biome-ignore lint/suspicious/noExplicitAny: a listener takes its event's own argument types, which any[] admits and unknown[] does not.
    on(event: string, listener: (...args: any[]) => void): this;
    // biome-ignore lint/suspicious/noExplicitAny: a listener takes its event's own argument types, which any[] admits and unknown[] does not.
    once(event: string, listener: (...args: any[]) => void): this;
    /** Reserved names (connect, disconnect, error…) stay local; any other event goes to the server. */
    emit(event: string, ...args: unknown[]): this;
    removeAllListeners(): this;
    disconnect(): this;
  }

  export interface ManagerOptionsV2 {
    path?: string;
    transports?: string[];
    forceNew?: boolean;
    multiplex?: boolean;
    reconnection?: boolean;
    timeout?: number;
    /** An http(s).Agent for the XHR polling requests and the WebSocket. */
    agent?: unknown;
    extraHeaders?: Record<string, string>;
  }

  export default function io(url: string, options?: ManagerOptionsV2): SocketV2;
}
