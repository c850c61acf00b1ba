"""The authors: their cards on About."""

from __future__ import annotations

from publisher.content.models import Author

VIEW_ON_AMAZON = "View on Amazon"

MAYA = Author(
    slug="maya-lindqvist",
    name="Maya Lindqvist",
    role="Author",
    author_bio=(
        "Maya Lindqvist has shared her home with guinea pigs since she was seven, "
        "and has been gently correcting people who call them hamsters for almost as "
        "long. After twenty years as a primary school teacher, she began writing the "
        "books she wished she could have read aloud to her class.",
        "Her stories mix careful research with a lot of giggling: every fact in "
        "Guinea Pig or Hamster? was checked with vets and small-animal rescuers, and "
        "every joke was tested on her nieces. She believes curiosity is the best "
        "pet anyone can keep.",
        "Maya lives by the sea with her husband, two guinea pigs called Pepper and "
        "Biscuit, and a growing list of animals that people keep confusing.",
    ),
    author_image="/images/authors/maya-lindqvist.svg",
    image_alt="Illustrated portrait of Maya Lindqvist, smiling, with glasses and auburn hair in a bun",
    amazon_url="https://www.amazon.com/author/mayalindqvist",
)

OLIVER = Author(
    slug="oliver-brandt",
    name="Oliver Brandt",
    role="Illustrator",
    author_bio=(
        "Oliver Brandt draws animals the way they really are: whiskers, wiggles and "
        "all. He studied scientific illustration before moving into picture books, "
        "and he still sketches from life, usually with a hamster asleep in his "
        "pocket.",
        "For this series he filled more than forty sketchbooks with guinea pigs and "
        "hamsters, so that young readers can spot the differences at a glance: the "
        "round ears, the missing tail, the stuffed cheek pouches. His line art in "
        "the coloring book leaves plenty of room for readers of every age to add "
        "their own colors.",
        "When he is not drawing, Oliver runs free sketching workshops at his local "
        "library and answers every letter a young artist sends him.",
    ),
    author_image="/images/authors/oliver-brandt.svg",
    image_alt="Illustrated portrait of Oliver Brandt with a short beard and dark curly hair, holding a pencil",
    amazon_url="https://www.amazon.com/author/oliverbrandt",
)

AUTHORS: tuple[Author, ...] = (MAYA, OLIVER)
