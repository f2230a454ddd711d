/** Text whose `backticked` spans are code, as template descriptions and API docs write them (never raw backticks on screen). */
export function InlineCodeText({ text }: { text: string }) {
  return (
    <>
      {text.split("`").map((part, i) =>
        i % 2 === 1 ? (
          <code key={i} className="mono">
            {part}
          </code>
        ) : (
          part
        ),
      )}
    </>
  );
}
