// The dashboard's passkey buttons (publisher/web/pages/admin.py): loaded by site.js on the
// admin pages only. A ceremony is plain HTTP (publisher/server/admin_sign_in.py): ask the
// server for its options, hand them to the browser's passkey prompt, post the answer. The
// session's cookie comes back in that answer, HttpOnly: this script never sees it. The page
// then reloads, so the app's event channel opens again carrying the cookie.
(function () {
  "use strict";

  var API = "/admin/api/";

  function bytesFromBase64url(text) {
    var base64 = text.replace(/-/g, "+").replace(/_/g, "/");
    var binary = window.atob(base64 + "===".slice((base64.length + 3) % 4));
    var bytes = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes.buffer;
  }

  function base64urlFromBytes(buffer) {
    var bytes = new Uint8Array(buffer);
    var binary = "";
    for (var i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]);
    return window.btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  // Browsers since 2024 parse the options and write the answer as JSON themselves; for older
  // ones, the same by hand (the binary fields are base64url in WebAuthn's JSON form).
  function creationOptions(json) {
    if (PublicKeyCredential.parseCreationOptionsFromJSON) return PublicKeyCredential.parseCreationOptionsFromJSON(json);
    var options = Object.assign({}, json);
    options.challenge = bytesFromBase64url(json.challenge);
    options.user = Object.assign({}, json.user, { id: bytesFromBase64url(json.user.id) });
    options.excludeCredentials = (json.excludeCredentials || []).map(function (c) {
      return Object.assign({}, c, { id: bytesFromBase64url(c.id) });
    });
    return options;
  }

  function requestOptions(json) {
    if (PublicKeyCredential.parseRequestOptionsFromJSON) return PublicKeyCredential.parseRequestOptionsFromJSON(json);
    var options = Object.assign({}, json);
    options.challenge = bytesFromBase64url(json.challenge);
    options.allowCredentials = (json.allowCredentials || []).map(function (c) {
      return Object.assign({}, c, { id: bytesFromBase64url(c.id) });
    });
    return options;
  }

  function answerJSON(credential) {
    if (typeof credential.toJSON === "function") return credential.toJSON();
    var response = credential.response;
    var answer = {
      id: credential.id,
      rawId: base64urlFromBytes(credential.rawId),
      type: credential.type,
      clientExtensionResults: credential.getClientExtensionResults(),
      authenticatorAttachment: credential.authenticatorAttachment,
      response: { clientDataJSON: base64urlFromBytes(response.clientDataJSON) },
    };
    if (response.attestationObject) {
      answer.response.attestationObject = base64urlFromBytes(response.attestationObject);
      answer.response.transports = response.getTransports ? response.getTransports() : [];
    } else {
      answer.response.authenticatorData = base64urlFromBytes(response.authenticatorData);
      answer.response.signature = base64urlFromBytes(response.signature);
      if (response.userHandle) answer.response.userHandle = base64urlFromBytes(response.userHandle);
    }
    return answer;
  }

  function post(path, body) {
    return window
      .fetch(API + path, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body || {}),
      })
      .then(function (response) {
        return response.json().then(
          function (data) {
            if (!response.ok) throw new Error(data.error || response.statusText);
            return data;
          },
          function () {
            throw new Error(response.statusText || "The dashboard did not answer.");
          }
        );
      });
  }

  function say(button, text) {
    var message = button.closest("[data-admin-page]").querySelector("[data-admin-message]");
    if (message) message.textContent = text;
  }

  function ceremony(button, start) {
    if (button.disabled) return;
    if (!window.PublicKeyCredential || !navigator.credentials) {
      say(button, button.getAttribute("data-unsupported") || "");
      return;
    }
    button.disabled = true;
    say(button, button.getAttribute("data-working") || "");
    start()
      .then(function () {
        window.location.assign("/admin");
      })
      .catch(function (error) {
        button.disabled = false;
        // The prompt closed without a passkey (cancelled, timed out): the browser's own words are no help.
        var cancelled = error && (error.name === "NotAllowedError" || error.name === "AbortError");
        say(button, cancelled ? button.getAttribute("data-cancelled") || "" : error.message);
      });
  }

  function enrol(button) {
    var token = window.location.hash.slice(1);
    ceremony(button, function () {
      return post("enrol/options", { token: token }).then(function (started) {
        return navigator.credentials
          .create({ publicKey: creationOptions(started.options) })
          .then(function (credential) {
            return post("enrol", { ceremony: started.ceremony, credential: answerJSON(credential) });
          });
      });
    });
  }

  function signIn(button) {
    ceremony(button, function () {
      return post("sign-in/options").then(function (started) {
        return navigator.credentials
          .get({ publicKey: requestOptions(started.options) })
          .then(function (credential) {
            return post("sign-in", { ceremony: started.ceremony, credential: answerJSON(credential) });
          });
      });
    });
  }

  function signOut(button) {
    button.disabled = true;
    post("sign-out").then(
      function () {
        window.location.assign("/admin");
      },
      function (error) {
        button.disabled = false;
        say(button, error.message);
      }
    );
  }

  // A download (the list, the audit log): a POST whose answer is saved as the file it names.
  function download(button) {
    button.disabled = true;
    window
      .fetch(button.getAttribute("data-admin-download"), { method: "POST", credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) {
          return response.json().then(function (data) {
            throw new Error(data.error || response.statusText);
          });
        }
        var disposition = response.headers.get("Content-Disposition") || "";
        var named = /filename="([^"]+)"/.exec(disposition);
        return response.blob().then(function (blob) {
          var link = document.createElement("a");
          link.href = URL.createObjectURL(blob);
          link.download = named ? named[1] : "download.csv";
          document.body.appendChild(link);
          link.click();
          link.remove();
          window.setTimeout(function () { URL.revokeObjectURL(link.href); }, 1000);
          say(button, "");
        });
      })
      .catch(function (error) {
        say(button, error.message);
      })
      .then(function () {
        button.disabled = false;
      });
  }

  document.addEventListener("click", function (event) {
    var button = event.target instanceof Element ? event.target.closest("button") : null;
    if (!button) return;
    if (button.hasAttribute("data-admin-download")) download(button);
    else if (button.hasAttribute("data-admin-enrol")) enrol(button);
    else if (button.hasAttribute("data-admin-sign-in")) signIn(button);
    else if (button.hasAttribute("data-admin-sign-out")) signOut(button);
  });
})();
