// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Permit.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {ReentrancyGuard} from "@openzeppelin/contracts/utils/ReentrancyGuard.sol";
import {BusinessEscrow} from "./BusinessEscrow.sol";
import {PerkNFT} from "./PerkNFT.sol";

/// @title PTS points sale
/// @notice Sells perks for reward tokens. The relayer (RELAYER_ROLE) claims on a user's behalf: the price moves
///         from the user (allowance from an EIP-2612 permit) into the business escrow, credited to the
///         collection's brand, and one perk is minted to the user.
contract PointsSale is AccessControl, ReentrancyGuard {
    using SafeERC20 for IERC20;

    bytes32 public constant RELAYER_ROLE = keccak256("RELAYER_ROLE");

    IERC20 public immutable token;
    PerkNFT public immutable perkNft;
    /// @notice Where sale proceeds go (credited to the collection's brand).
    BusinessEscrow public immutable treasury;

    event PerkPurchased(address indexed user, uint256 indexed collectionId, address indexed brand, uint256 price);

    error ZeroAddress();
    error CollectionInactive(uint256 collectionId);
    error InsufficientAllowance(address user, uint256 allowance, uint256 price);
    error TreasuryTokenMismatch(address treasuryToken, address token);

    constructor(IERC20 token_, PerkNFT perkNft_, BusinessEscrow treasury_, address admin) {
        if (
            address(token_) == address(0) || address(perkNft_) == address(0) || address(treasury_) == address(0)
                || admin == address(0)
        ) revert ZeroAddress();
        if (address(treasury_.token()) != address(token_)) {
            revert TreasuryTokenMismatch(address(treasury_.token()), address(token_));
        }
        token = token_;
        perkNft = perkNft_;
        treasury = treasury_;
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
        // The escrow pulls each sale's proceeds from this contract; one approval for its whole life.
        token_.forceApprove(address(treasury_), type(uint256).max);
    }

    /// @notice Buys one perk of `collectionId` for `user`, who must already have approved this contract for the price.
    function claimPerk(address user, uint256 collectionId) external onlyRole(RELAYER_ROLE) nonReentrant {
        _claim(user, collectionId);
    }

    /// @notice Runs the user's permit (value = the collection's current price, spender = this contract) and buys.
    ///         A permit that fails (already used, e.g. front-run by someone submitting it first) is tolerated as
    ///         long as the allowance covers the price.
    function claimPerkWithPermit(address user, uint256 collectionId, uint256 deadline, uint8 v, bytes32 r, bytes32 s)
        external
        onlyRole(RELAYER_ROLE)
        nonReentrant
    {
        uint256 price = perkNft.collection(collectionId).price;
        try IERC20Permit(address(token)).permit(user, address(this), price, deadline, v, r, s) {}
        catch {
            uint256 allowance = token.allowance(user, address(this));
            if (allowance < price) revert InsufficientAllowance(user, allowance, price);
        }
        _claim(user, collectionId);
    }

    function _claim(address user, uint256 collectionId) private {
        if (user == address(0)) revert ZeroAddress();
        PerkNFT.Collection memory c = perkNft.collection(collectionId);
        if (!c.active) revert CollectionInactive(collectionId);
        if (c.price > 0) {
            token.safeTransferFrom(user, address(this), c.price);
            treasury.depositToken(c.brand, c.price);
        }
        perkNft.mint(user, collectionId, 1);
        emit PerkPurchased(user, collectionId, c.brand, c.price);
    }
}
