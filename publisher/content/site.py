"""The brand and the words of the shared layout: header, menu drawer, footer, links."""

from __future__ import annotations

from publisher.content.models import SocialLink

BRAND_NAME = "Animals We Confuse"
TAGLINE = "Animals We Confuse!"
LOGO_IMAGE = "/logo.svg"
SHARE_IMAGE = "/images/og-default.png"  # a PNG of content/images.py's share size
SHARE_IMAGE_ALT = "The Animals We Confuse logo: a guinea pig and a hamster side by side"
AFFILIATE_NOTE = (
    "Some links on this site are affiliate links: if you buy through them, we may "
    "earn a small commission at no extra cost to you."
)

SOCIAL_LINKS: tuple[SocialLink, ...] = (
    SocialLink(name="Facebook", url="https://www.facebook.com/animalsweconfuse"),
    SocialLink(name="Instagram", url="https://www.instagram.com/animalsweconfuse"),
    SocialLink(name="YouTube", url="https://www.youtube.com/@animalsweconfuse"),
    SocialLink(name="TikTok", url="https://www.tiktok.com/@animalsweconfuse"),
    SocialLink(name="X", url="https://x.com/animalsweconfuse"),
)

# --- Header and menu drawer ---------------------------------------------------------

MENU_TITLE = "Menu"  # the drawer's title, and the menu button's name for screen readers
CLOSE_MENU_LABEL = "Close menu"
HEADER_NAV_LABEL = "Main"
DRAWER_NAV_LABEL = "Main menu"

# --- Footer -------------------------------------------------------------------------

FOLLOW_US = "Follow us on"
COPYRIGHT_SIGN = "© "
COPYRIGHT_HOLDER = f" {BRAND_NAME}. All rights reserved."  # after the current year

# --- Links and errors ---------------------------------------------------------------

NEW_TAB_NOTE = " (opens in a new tab)"  # read by screen readers after a link that leaves the site
UNEXPECTED_ERROR = "Something went wrong on our side. Please try again in a moment."
