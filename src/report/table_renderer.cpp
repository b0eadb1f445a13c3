// TableRenderer (renderer.hpp): the tables for people, wrapped to the line width; errors to stderr.
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "report/renderer.hpp"
#include "util/printable.hpp"

namespace cumemctl {
namespace {

// Display width of UTF-8 text: counts code points, which is right for the text cumemctl prints.
std::size_t display_width(const std::string& s) {
    return static_cast<std::size_t>(
        std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// A cell's text in its tone's colour, only on a terminal.
std::string paint(const std::string& text, Tone tone, bool colour) {
    if (!colour) return text;
    const char* code = nullptr;
    switch (tone) {
        case Tone::good:
            code = "32";
            break;
        case Tone::attention:
            code = "33";
            break;
        case Tone::bad:
            code = "31";
            break;
        case Tone::faint:
            code = "2";
            break;
        case Tone::plain:
            return text;
    }
    return std::string("\x1b[") + code + "m" + text + "\x1b[0m";
}

// Where the word at `pos` ends: at the next space, or, for a quoted command or path ('cumemctl
// imex-setup --owner USER', also inside a parenthesis), after its closing quote, so that a command is
// never broken across lines. An apostrophe (driver's) opens nothing: a quote opens only a word.
std::size_t word_end(const std::string& text, std::size_t pos) {
    std::size_t quote = pos < text.size() && text[pos] == '(' ? pos + 1 : pos;
    if (quote < text.size() && text[quote] == '\'') {
        for (std::size_t close = text.find('\'', quote + 1); close != std::string::npos;
             close = text.find('\'', close + 1)) {
            const bool ends =
                close + 1 == text.size() || std::isalnum(static_cast<unsigned char>(text[close + 1])) == 0;
            if (ends) {
                const std::size_t space = text.find(' ', close);
                return space == std::string::npos ? text.size() : space;
            }
        }
    }
    const std::size_t space = text.find(' ', pos);
    return space == std::string::npos ? text.size() : space;
}

// Splits text at spaces into lines of at most `width` display columns (a longer word keeps its line;
// a quoted command is one word); width 0: one line, unwrapped.
std::vector<std::string> wrap_words(const std::string& text, std::size_t width) {
    if (width == 0) return {text};
    std::vector<std::string> lines;
    std::string line;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        const std::size_t next = word_end(text, pos);
        const std::string word = text.substr(pos, next - pos);
        if (!line.empty() && display_width(line) + 1 + display_width(word) > width) {
            lines.push_back(line);
            line.clear();
        }
        if (!word.empty()) line += (line.empty() ? "" : " ") + word;
        pos = next + 1;
    }
    if (!line.empty() || lines.empty()) lines.push_back(line);
    return lines;
}

// Each column's width: its widest cell or heading, as printed (printable: written out where needed).
std::vector<std::size_t> column_widths(const Table& table) {
    std::vector<std::size_t> width(table.columns.size(), 0);
    for (std::size_t c = 0; c < table.columns.size(); ++c) width[c] = display_width(printable(table.columns[c]));
    for (const auto& row : table.rows) {
        for (std::size_t c = 0; c < row.size() && c < width.size(); ++c) {
            width[c] = std::max(width[c], display_width(printable(row[c].text)));
        }
    }
    return width;
}

// The notes under a table, wrapped where the table wraps its last column.
void render_notes(const Table& table, std::ostream& out, std::size_t line_width) {
    for (const auto& outside : table.notes) {
        const std::string note = printable(outside);
        if (note.empty()) {
            out << '\n';
            continue;
        }
        if (!table.wrap_last) {
            out << "  " << note << '\n';
            continue;
        }
        const auto lines = wrap_words(note, line_width == 0 ? 0 : line_width > 26 ? line_width - 6 : 20);
        for (std::size_t i = 0; i < lines.size(); ++i) out << (i == 0 ? "  " : "      ") << lines[i] << '\n';
    }
}

}  // namespace

void render_table(const Table& table, std::ostream& out, bool colour, std::size_t line_width) {
    if (!table.title.empty())
        out << (colour ? "\x1b[1m" : "") << printable(table.title) << (colour ? "\x1b[0m" : "") << '\n';
    const std::vector<std::size_t> width = column_widths(table);
    // Where the last column starts, and how wide it may be when it wraps (never below 20).
    std::size_t indent = 2;
    for (std::size_t c = 0; c + 1 < width.size(); ++c) indent += width[c] + 2;
    // Width 0: the output is no terminal, and lines stay whole (for grep).
    std::size_t room = line_width == 0 ? 0 : line_width > indent + 20 ? line_width - indent : 20;
    // Where the other columns leave the last one less than 20 and it does not fit, it goes below its
    // row, indented as a note's next lines, so that the table keeps to the width.
    const bool below = table.wrap_last && line_width != 0 && width.size() > 1 && line_width < indent + 20 &&
                       indent + width.back() > line_width;
    if (below) {
        indent = 6;
        room = line_width > 26 ? line_width - 6 : 20;
    }
    auto line = [&](const std::vector<TableCell>& cells, bool heading) {
        std::string text = "  ";
        std::vector<std::string> more;
        for (std::size_t c = 0; c < width.size(); ++c) {
            std::string cell = c < cells.size() ? printable(cells[c].text) : "";
            const bool last = c + 1 == width.size();
            if (last && below) {
                if (!heading && !cell.empty()) more = wrap_words(cell, room);
                break;
            }
            if (last && table.wrap_last && !heading) {
                more = wrap_words(cell, room);
                cell = more.front();
                more.erase(more.begin());
            }
            text += heading || c >= cells.size() ? cell : paint(cell, cells[c].tone, colour);
            if (!last) text += std::string(width[c] - display_width(cell) + 2, ' ');
        }
        while (!text.empty() && text.back() == ' ') text.pop_back();  // blank cells leave no trailing blanks
        out << text << '\n';
        for (const auto& m : more) out << std::string(indent, ' ') << m << '\n';
    };
    if (!table.columns.empty()) line(plain_cells(table.columns), true);
    for (const auto& row : table.rows) line(row, false);
    render_notes(table, out, line_width);
}

void TableRenderer::render(const Report& report, std::ostream& out) const {
    if (!report.results) return;  // the errors go to stderr
    const std::string text = report.results->text();
    const std::vector<Table> tables = report.results->tables(report);
    out << text;
    bool first = text.empty();
    for (const auto& table : tables) {
        if (!first) out << '\n';
        first = false;
        render_table(table, out, colour_, width_);
    }
}

void write_problems(const Report& report, std::ostream& err) {
    for (const auto& w : report.warnings) {
        err << "cumemctl: warning: " << printable(w.message) << '\n';
        if (!w.remedy.empty()) err << "  hint: " << printable(w.remedy) << '\n';
    }
    for (const auto& e : report.errors) {
        err << "cumemctl: error: " << printable(e.message) << '\n';
        if (!e.cause.empty()) err << "  cause: " << printable(e.cause) << '\n';
        if (!e.remedy.empty()) err << "  hint: " << printable(e.remedy) << '\n';
    }
}

}  // namespace cumemctl
