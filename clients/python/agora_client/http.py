"""Commands and queries over the HTTP gateway (urllib only)."""
import json
import urllib.error
import urllib.parse
import urllib.request

from .read_token import DEFAULT_AUDIENCE, mint_read_token
from .signing import sign_command


class AgoraError(Exception):
    """A refusal: {ok: false, error: {code, message, details}}."""

    def __init__(self, status, error):
        super().__init__("%s (%s): %s" % (error.get("code"), status, error.get("message")))
        self.status = status
        self.code = error.get("code")
        self.details = error.get("details")


class AgoraHttpClient:
    def __init__(self, base_url, timeout=10.0, reader=None, audience=DEFAULT_AUDIENCE):
        """`reader`: the key pair (with its agent id) whose read token every query carries; needed where the gateway closes reads."""
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.reader = reader
        self.audience = audience

    def _call(self, method, path, body=None):
        data = None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        headers = {"content-type": "application/json", "accept": "application/json"}
        if method == "GET" and self.reader is not None:
            headers["authorization"] = "Bearer " + mint_read_token(self.reader, audience=self.audience)
        request = urllib.request.Request(self.base_url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                status, text = response.status, response.read()
        except urllib.error.HTTPError as error:
            status, text = error.code, error.read()
        reply = json.loads(text)
        if not reply.get("ok"):
            raise AgoraError(status, reply.get("error", {}))
        return reply["result"]

    def send(self, envelope):
        """POST a signed envelope to /v1/commands; the CommandResult, or AgoraError."""
        return self._call("POST", "/v1/commands", envelope)

    def command(self, command_type, payload, key_pair, actor=None, **options):
        return self.send(sign_command(command_type, actor or key_pair.agent_id, payload, key_pair, **options))

    def query(self, service, path, min_position=None, **params):
        """GET /v1/<service>/<path> (path parameters already in `path`), other params in the query string.

        Read your writes: with `min_position` (the "position" of a command's result) the answer
        includes that write, or AgoraError with code "read_model_behind" after the gateway's bounded wait.
        """
        if min_position is not None:
            params["minPosition"] = min_position
        query = urllib.parse.urlencode({k: v for k, v in params.items() if v is not None}, doseq=True)
        return self._call("GET", "/v1/%s/%s%s" % (service, path, "?" + query if query else ""))

    def query_all(self, service, path, field, min_position=None, **params):
        """Every item of a list query, in its order: follows `nextCursor` page by page (1,000 a request), yielding the items of `field` (e.g. "agents"); `min_position` as in `query`."""
        cursor = None
        while True:
            page = self.query(service, path, min_position=min_position, limit=1000, cursor=cursor, **params)
            for item in page[field]:
                yield item
            cursor = page.get("nextCursor")
            if cursor is None:
                return
