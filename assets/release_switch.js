// A forthcoming book's part in `reflex run` (web/components/book_cards.py ReleaseSwitch): its first
// child until `at`, then its second, at the moment, without a reload. A prerender has no window: the second.
import { Children, useEffect, useState } from "react";

export function ReleaseSwitch({ at, children }) {
  const [now, setNow] = useState(() => (typeof window === "undefined" ? Infinity : Date.now()));
  useEffect(() => {
    if (now >= at) return undefined;
    const timer = setTimeout(() => setNow(Date.now()), Math.min(at - now, 2147483647));
    return () => clearTimeout(timer);
  }, [now, at]);
  return Children.toArray(children)[now >= at ? 1 : 0];
}
