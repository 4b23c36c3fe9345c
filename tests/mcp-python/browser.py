"""A stand-in browser for tests/e2e/mcp_oauth.rs, set as $BROWSER.

    browser.py follow URL   open the authorization URL and follow every redirect, back to
                            the loopback callback, as a browser whose user approves does
    browser.py forge URL    take the authorization server's redirect, but come back to the
                            callback with another `state`, as a forged request would
"""

import sys
import urllib.error
import urllib.parse
import urllib.request


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def main():
    mode, url = sys.argv[1], sys.argv[2]
    if mode == "follow":
        urllib.request.urlopen(url, timeout=30).read()
        return
    opener = urllib.request.build_opener(NoRedirect)
    try:
        opener.open(url, timeout=30)
        raise SystemExit("the authorization server did not redirect")
    except urllib.error.HTTPError as e:
        location = e.headers["Location"]
    parts = urllib.parse.urlsplit(location)
    query = [
        (k, "forged-state" if k == "state" else v)
        for k, v in urllib.parse.parse_qsl(parts.query)
    ]
    forged = parts._replace(query=urllib.parse.urlencode(query)).geturl()
    urllib.request.urlopen(forged, timeout=30).read()


if __name__ == "__main__":
    main()
