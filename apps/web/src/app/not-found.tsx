import Link from "next/link";

export default function NotFound() {
  return (
    <div className="panel">
      <h2 className="panel-title">Not found</h2>
      <p>There is nothing here. The run may have been deleted, or the address is mistyped.</p>
      <Link href="/" className="button">
        Back to runs
      </Link>
    </div>
  );
}
