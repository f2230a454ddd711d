import type { ErrorClass } from "./connect-error";
import type { CloseInfo, Connection, OutMessage } from "./driver";

/**
 * The bookkeeping every driver's Connection shares: one message and one close handler, "closed by
 * us or by the server", and a close reported exactly once. Subclasses wire their transport's
 * events to `deliver` and `ended`.
 */
export abstract class ConnectionBase implements Connection {
  /** The engine's message handler; subclasses call it directly on the hot path. */
  protected deliver: (data: Buffer | string) => void = () => {};
  protected closingByUs = false;
  /** Per-message failures (see Connection.onError); ignored until the engine asks for them. */
  protected messageError: (errorClass: ErrorClass, detail: string) => void = () => {};
  /** Connect times of the sockets requests go out on (plain HTTP; see Connection.onSocketConnect). */
  protected socketConnected: (connectUs: number) => void = () => {};
  private closeCb: (info: CloseInfo) => void = () => {};
  private isEnded = false;

  abstract send(payload: Buffer | string): void;

  /** Starts closing the transport; called once, from close(). */
  protected abstract shutdown(): void;

  onMessage(cb: (data: Buffer | string) => void): void {
    this.deliver = cb;
  }

  /** Protocols without events: the body is the frame (a JSON value as its JSON text). */
  emit(msg: OutMessage, _ack?: (data: unknown) => void): void {
    const { body } = msg;
    this.send(typeof body === "string" || Buffer.isBuffer(body) ? body : JSON.stringify(body));
  }

  /** Protocols without events: every message arrives with no event. */
  onEvent(cb: (event: string | undefined, data: unknown) => void): void {
    this.deliver = (data) => cb(undefined, data);
  }

  onClose(cb: (info: CloseInfo) => void): void {
    this.closeCb = cb;
  }

  onError(cb: (errorClass: ErrorClass, detail: string) => void): void {
    this.messageError = cb;
  }

  onSocketConnect(cb: (connectUs: number) => void): void {
    this.socketConnected = cb;
  }

  close(): void {
    if (this.closingByUs) return;
    this.closingByUs = true;
    this.shutdown();
  }

  /** Reports the end once; the error class only counts when the server (or the network) ended it. */
  protected ended(info: Omit<CloseInfo, "byServer" | "errorClass">, errorClass?: ErrorClass): void {
    if (this.isEnded) return;
    this.isEnded = true;
    const full: CloseInfo = { byServer: !this.closingByUs, ...info };
    if (errorClass && !this.closingByUs) full.errorClass = errorClass;
    this.closeCb(full);
  }
}
