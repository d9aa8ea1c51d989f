// A timestamp shown in the reader's locale, machine-readable in `datetime`.
import { formatTime } from "./format";

export function Time(props: { iso: string }) {
  return (
    <time dateTime={props.iso} title={props.iso}>
      {formatTime(props.iso)}
    </time>
  );
}
