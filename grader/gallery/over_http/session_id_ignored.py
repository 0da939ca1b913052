"""Gallery exhibit: session_id_ignored."""

from typing import Any

from grader.gallery.over_http.base import SESSION, HttpShop, Session, main


class Server(HttpShop):
    def session_for(self, message: Any) -> Session | None:
        # Be forgiving: a request without a session id, or with one we do not know, gets a fresh one.
        known = self.server.sessions.get(self.headers.get(SESSION) or "")
        return known if known is not None else self.server.new_session()


if __name__ == "__main__":
    raise SystemExit(main(Server))
